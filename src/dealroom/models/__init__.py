"""Every model dealroom talks to: OpenAI-compatible endpoints, the embedded ``local`` model,
and the ``ScriptedModel`` fake, behind one :class:`ModelClient` protocol.

Open a client with :func:`open_model` (spec strings: a models-file name, ``local``,
``scripted`` for the root, or ``MODEL@BASE_URL``), fail fast with :func:`check`, and fan out
with :func:`gather_bounded` (inside :func:`hedging`, stragglers are re-sent). A call that
fails for good raises :class:`ProviderError`. ``dealroom.models.testing`` holds
``MockOpenAIServer``.
"""

from dealroom.models._client import ChatResult, ModelClient, OpenAICompatibleClient, check
from dealroom.models._fanout import gather_bounded
from dealroom.models._hedge import HedgeWave, hedging
from dealroom.models._local import LocalServer, local_server
from dealroom.models._registry import open_model, provider_names
from dealroom.models._scripted import ScriptedCall, ScriptedModel
from dealroom.models._spec import (
    ModelSpec,
    Prices,
    default_models_file,
    load_models_file,
    require_prices,
    resolve_model_spec,
)
from dealroom.models._text import strip_controls, visible_controls
from dealroom.models._wire import ProviderError

__all__ = [
    "ChatResult",
    "HedgeWave",
    "LocalServer",
    "ModelClient",
    "ModelSpec",
    "OpenAICompatibleClient",
    "Prices",
    "ProviderError",
    "ScriptedCall",
    "ScriptedModel",
    "check",
    "default_models_file",
    "gather_bounded",
    "hedging",
    "load_models_file",
    "local_server",
    "open_model",
    "provider_names",
    "require_prices",
    "resolve_model_spec",
    "strip_controls",
    "visible_controls",
]
