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

from kaudit.proxy._door import ModelDoor
from kaudit.proxy._exchange import Sent
from kaudit.proxy._server import ModelProxy
from kaudit.proxy._traffic import ModelTraffic
from kaudit.proxy._upstream import Upstream

__all__ = [
    "ModelDoor",
    "ModelProxy",
    "ModelTraffic",
    "Sent",
    "Upstream",
]
