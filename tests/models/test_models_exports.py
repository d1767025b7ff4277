import types

import dealroom.models


def test_all_lists_exactly_the_public_names():
    public = {
        name
        for name, value in vars(dealroom.models).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(dealroom.models.__all__)


def test_mock_server_lives_in_the_testing_module():
    from dealroom.models.testing import Fault, MockOpenAIServer, chat_completion_body

    assert callable(MockOpenAIServer) and callable(Fault.rate_limit)
    assert chat_completion_body("x")["choices"][0]["message"]["content"] == "x"
