import types

import dealroom.judge


def test_all_lists_exactly_the_public_names():
    public = {
        name
        for name, value in vars(dealroom.judge).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(dealroom.judge.__all__)
