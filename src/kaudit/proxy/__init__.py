"""The model door: a recording proxy between an external agent and its model.

An agent kaudit did not write reaches its model through this proxy, on loopback, with
`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` pointing at it: every call is forwarded to the
upstream the user named, streams byte for byte, and recorded with the run (messages in
and out, the tool calls the model proposed, tokens, cost at the config's price, latency,
upstream errors in chat agents' `api_error` words). The proxy adds evidence, never a
verdict; the run's budget is enforced here, where its money is spent.
"""

from importlib.util import find_spec

from kaudit.errors import KauditError

if find_spec("aiohttp") is None:
    raise KauditError("the model proxy needs aiohttp: pip install 'kaudit[proxy]'")

from kaudit.proxy._budget import RunBudget
from kaudit.proxy._door import ModelDoor, ModelDoorConfig, model_door
from kaudit.proxy._exchange import Api, Exchange, ProposedCall, Said, Sent
from kaudit.proxy._server import PLACEHOLDER_KEY, ModelProxy
from kaudit.proxy._traffic import ModelTraffic
from kaudit.proxy._upstream import Upstream, upstream_from

__all__ = [
    "PLACEHOLDER_KEY",
    "Api",
    "Exchange",
    "ModelDoor",
    "ModelDoorConfig",
    "ModelProxy",
    "ModelTraffic",
    "ProposedCall",
    "RunBudget",
    "Said",
    "Sent",
    "Upstream",
    "model_door",
    "upstream_from",
]
