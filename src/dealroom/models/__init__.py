"""Every model dealroom talks to: OpenAI-compatible endpoints, the embedded ``local`` model,
in-process transformers models (``hf:``) and the ``ScriptedModel`` fake, behind one
:class:`ModelClient` protocol.

Open a client with :func:`open_model` (spec strings: a models-file name, ``local``,
``scripted`` for the root, ``oracle`` for the answer-key simulator sub-agent,
``MODEL@BASE_URL``, or ``hf:PATH``; each ``[models.NAME]`` table of a models file is a
:class:`ModelEntry`, an ``hf`` model's options an :class:`HFOptions`), fail fast with
:func:`check`, and fan out with :func:`gather_bounded` (inside :func:`hedging`, stragglers
are re-sent); :func:`lazy_model` opens its model on the first call. A call that fails for
good raises :class:`ProviderError`. :func:`model_record` says which endpoint and model a client
is (a run's ``config.json`` keeps one per role; :func:`model_change` compares two).
Replies are split into reasoning and answer (:func:`split_reasoning`; ``ChatResult.text`` is
the answer); every call carries a reply cap (:func:`reply_cap`). ``hf:`` replies carry a
:class:`TokenRecord` (the run folder's record, from ``dealroom.runs``).
A sub-call's ``schema=`` is asked for as :func:`schema_via` says and read back with
:func:`read_structured`.
``dealroom.testing`` holds ``MockOpenAIServer`` and the other test helpers.
"""

from dealroom._util.reasoning import (
    HISTORY_POLICIES,
    answer_text,
    history_content,
    join_reasoning,
    split_reasoning,
    template_opens,
)
from dealroom._util.text import strip_controls, visible_controls
from dealroom.models._chat import (
    CLOSE,
    ENV,
    REPLY,
    ChatPiece,
    chat_pieces,
    encode_pieces,
    reply_text,
)
from dealroom.models._client import ModelClient, OpenAICompatibleClient, check
from dealroom.models._fanout import gather_bounded
from dealroom.models._file import ModelEntry, default_models_file, load_models_file
from dealroom.models._hedge import HedgeWave, hedging
from dealroom.models._hf import HFModelClient
from dealroom.models._hfload import TRAIN_RECORD, LoadedModel, load_hf_model, load_hf_tokenizer
from dealroom.models._identity import model_change, model_record
from dealroom.models._lazy import LazyModel, lazy_model
from dealroom.models._local import LocalServer, local_server
from dealroom.models._local import model_path as local_model_path
from dealroom.models._loopback import LoopbackServer
from dealroom.models._oracle import OracleModel, OracleSettings
from dealroom.models._registry import open_model, provider_names
from dealroom.models._result import ChatResult
from dealroom.models._scripted import ScriptedCall, ScriptedModel
from dealroom.models._spec import (
    HFOptions,
    ModelSpec,
    Prices,
    reply_cap,
    require_prices,
    resolve_model_spec,
    split_spec,
)
from dealroom.models._structured import (
    FINDINGS_SCHEMA,
    check_schema,
    read_structured,
    retry_note,
    schema_format,
    schema_prompt,
    schema_via,
)
from dealroom.models._window import PromptCounter, words_estimate
from dealroom.models._wire import ProviderError
from dealroom.runs import TokenRecord

__all__ = [
    "CLOSE",
    "ENV",
    "FINDINGS_SCHEMA",
    "REPLY",
    "reply_text",
    "HISTORY_POLICIES",
    "TRAIN_RECORD",
    "ChatPiece",
    "ChatResult",
    "HFModelClient",
    "HFOptions",
    "HedgeWave",
    "LazyModel",
    "LoadedModel",
    "LocalServer",
    "LoopbackServer",
    "ModelClient",
    "ModelEntry",
    "ModelSpec",
    "OpenAICompatibleClient",
    "OracleModel",
    "OracleSettings",
    "Prices",
    "PromptCounter",
    "ProviderError",
    "ScriptedCall",
    "ScriptedModel",
    "TokenRecord",
    "answer_text",
    "chat_pieces",
    "check",
    "check_schema",
    "default_models_file",
    "encode_pieces",
    "gather_bounded",
    "hedging",
    "history_content",
    "join_reasoning",
    "lazy_model",
    "load_hf_model",
    "load_hf_tokenizer",
    "load_models_file",
    "local_model_path",
    "local_server",
    "model_change",
    "model_record",
    "open_model",
    "provider_names",
    "read_structured",
    "reply_cap",
    "require_prices",
    "resolve_model_spec",
    "retry_note",
    "schema_format",
    "schema_prompt",
    "schema_via",
    "split_reasoning",
    "split_spec",
    "strip_controls",
    "template_opens",
    "visible_controls",
    "words_estimate",
]
