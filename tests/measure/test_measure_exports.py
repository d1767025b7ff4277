import types

import dealroom.measure


def test_all_lists_exactly_the_public_names():
    public = {
        name
        for name, value in vars(dealroom.measure).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(dealroom.measure.__all__)
