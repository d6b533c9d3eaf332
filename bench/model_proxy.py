"""The model proxy's added latency: the same requests direct and through the proxy.

The upstream is kaudit's chat test server in its own process; the client, in another
process, alternates one request straight to the upstream with one through the proxy
(which runs in this process, as it does beside a campaign), over kept-alive loopback
connections, whole and streamed replies alike. Prints the median milliseconds per
request of each path, the proxy's added median and the ratio.

    python bench/model_proxy.py [--requests 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import statistics
import subprocess
import sys
import time
from urllib.parse import urlsplit

from kaudit.agents.chat.testserver import Call, Persona, Reply, serve
from kaudit.proxy import ModelProxy, ModelTraffic, Upstream

BODY = {
    "model": "bot",
    "messages": [{"role": "user", "content": "Cancel order 3 and tell me when it is done."}],
    "max_tokens": 64,
}
REPLY = Reply(content="Looking the order up first.", calls=(Call("get_order", {"id": 3}),))


def _upstream(ready: multiprocessing.Queue[str]) -> None:
    serve({"bot": Persona.single([REPLY])}, ready=ready.put)


def client(direct: str, proxied: str, requests: int) -> dict[str, list[float]]:
    """Alternate direct and proxied POSTs; milliseconds to the last byte, by path and mode."""
    connections = {}
    for name, url in (("direct", direct), ("proxied", proxied)):
        parts = urlsplit(url)
        connections[name] = (http.client.HTTPConnection(parts.hostname, parts.port), parts.path)
    times: dict[str, list[float]] = {}
    for i in range(requests):
        stream = i % 2 == 1
        payload = json.dumps(
            BODY | ({"stream": True, "stream_options": {"include_usage": True}} if stream else {})
        )
        for name, (conn, path) in connections.items():
            start = time.perf_counter()
            conn.request(
                "POST", f"{path}/chat/completions", payload, {"Content-Type": "application/json"}
            )
            reply = conn.getresponse()
            reply.read()
            elapsed = (time.perf_counter() - start) * 1000.0
            if i >= 10:  # warm-up: connections, caches
                times.setdefault(f"{name}_{'stream' if stream else 'whole'}", []).append(elapsed)
    return times


async def measure(requests: int) -> dict[str, object]:
    ready: multiprocessing.Queue[str] = multiprocessing.Queue()
    server = multiprocessing.Process(target=_upstream, args=(ready,), daemon=True)
    server.start()
    try:
        url = ready.get(timeout=30) + "/v1"
        upstream = Upstream(url)
        traffic = ModelTraffic(upstream)
        async with ModelProxy(upstream, traffic) as proxy:
            done = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--client", url, f"{proxy.base_url}/v1", str(requests),
                stdout=subprocess.PIPE,
            )  # fmt: skip
            out, _ = await done.communicate()
        times = json.loads(out)
    finally:
        server.terminate()
        server.join()
    result: dict[str, object] = {"requests": requests, "recorded": len(traffic.exchanges)}
    for mode in ("whole", "stream"):
        direct = statistics.median(times[f"direct_{mode}"])
        proxied = statistics.median(times[f"proxied_{mode}"])
        result[mode] = {
            "direct_ms": round(direct, 3),
            "proxied_ms": round(proxied, 3),
            "added_ms": round(proxied - direct, 3),
            "ratio": round(proxied / direct, 3),
        }
    return result


def main() -> None:
    if sys.argv[1:2] == ["--client"]:
        print(json.dumps(client(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.requests))
    if not args.json:
        for mode in ("whole", "stream"):
            row = result[mode]
            assert isinstance(row, dict)
            print(
                f"{mode:6} replies: direct {row['direct_ms']:.3f} ms, through the proxy "
                f"{row['proxied_ms']:.3f} ms, added {row['added_ms']:.3f} ms (×{row['ratio']:.2f})"
            )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
