"""A tiny in-process server speaking OpenAI's ``POST /v1/embeddings`` wire format.

Request: ``{"model": str, "input": [str, ...]}``. Answer: ``{"object": "list", "data": [{"object":
"embedding", "index": i, "embedding": [float, ...]}], "model": str, "usage": {...}}``; errors are
``{"error": {"message", "type"}}`` with a 4xx/5xx status, as the real API does.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.fake_embedder import FakeEmbedder


class FakeEmbeddingsAPI:
    def __init__(self, api_key: str = "", fail_status: int = 0) -> None:
        self.api_key = api_key
        self.fail_status = fail_status
        self.requests: list[dict[str, Any]] = []
        self.shuffle = False  # answer data out of order (clients must sort by index)
        self.model = FakeEmbedder()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                if outer.api_key and self.headers.get("Authorization") != f"Bearer {outer.api_key}":
                    return self._send(401, {"error": {"message": "bad key", "type": "invalid_api_key"}})
                if outer.fail_status:
                    return self._send(outer.fail_status, {"error": {"message": "boom", "type": "server_error"}})
                req = json.loads(body)
                outer.requests.append(req)
                texts = req["input"] if isinstance(req["input"], list) else [req["input"]]
                vectors = outer.model.embed(texts)
                data = [{"object": "embedding", "index": i, "embedding": [float(x) * 3 for x in v]}
                        for i, v in enumerate(vectors)]  # not normalised: the client must normalise
                if outer.shuffle:
                    data.reverse()
                self._send(200, {"object": "list", "data": data, "model": req["model"],
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeEmbeddingsAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
