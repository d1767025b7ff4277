"""Every model dealroom talks to: OpenAI-compatible endpoints, the embedded ``local`` model,
and the ``ScriptedModel`` fake, behind one :class:`ModelClient` protocol.

Open a client with :func:`open_model` (spec strings: a models-file name, ``local``,
``scripted`` for the root, ``oracle`` for the answer-key simulator sub-agent, or
``MODEL@BASE_URL``), fail fast with :func:`check`, and fan out
with :func:`gather_bounded`; :func:`lazy_model` opens its model on the first call.
``dealroom.models.testing`` holds ``MockOpenAIServer``.
"""

from dealroom.models._client import ChatResult, ModelClient, OpenAICompatibleClient, check
from dealroom.models._fanout import gather_bounded
from dealroom.models._lazy import LazyModel, lazy_model
from dealroom.models._local import LocalServer, local_server
from dealroom.models._oracle import OracleModel, OracleSettings
from dealroom.models._registry import open_model, provider_names
from dealroom.models._scripted import ScriptedCall, ScriptedModel
from dealroom.models._spec import (
    ModelSpec,
    Prices,
    default_models_file,
    load_models_file,
    resolve_model_spec,
    split_spec,
)

__all__ = [
    "ChatResult",
    "LazyModel",
    "LocalServer",
    "ModelClient",
    "ModelSpec",
    "OpenAICompatibleClient",
    "OracleModel",
    "OracleSettings",
    "Prices",
    "ScriptedCall",
    "ScriptedModel",
    "check",
    "default_models_file",
    "gather_bounded",
    "lazy_model",
    "load_models_file",
    "local_server",
    "open_model",
    "provider_names",
    "resolve_model_spec",
    "split_spec",
]
