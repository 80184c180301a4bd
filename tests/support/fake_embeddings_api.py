"""A tiny in-process server speaking OpenAI's ``POST /v1/embeddings`` wire format.

Request: ``{"model": str, "input": [str, ...]}``. Answer: ``{"object": "list", "data": [{"object":
"embedding", "index": i, "embedding": [float, ...]}], "model": str, "usage": {...}}``; errors are
``{"error": {"message", "type"}}`` with a 4xx/5xx status, as the real API does.
``requests`` holds the request bodies that were answered.
"""

from __future__ import annotations

import json
from typing import cast

from tests.support import fake_http
from tests.support.fake_embedder import FakeEmbedder


class _Handler(fake_http.FakeHandler):
    protocol_version = "HTTP/1.0"  # one request a connection

    def do_POST(self) -> None:
        fake = cast(FakeEmbeddingsAPI, self.server.fake)
        body = self.read_body()
        if self.path != "/v1/embeddings":
            return self.send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        if fake.api_key and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
            return self.send_json(401, {"error": {"message": "bad key", "type": "invalid_api_key"}})
        if fake.fail_status:
            return self.send_json(fake.fail_status, {"error": {"message": "boom", "type": "server_error"}})
        req = json.loads(body)
        fake._add(req)
        texts = req["input"] if isinstance(req["input"], list) else [req["input"]]
        vectors = fake.model.embed(texts)
        data = [{"object": "embedding", "index": i, "embedding": [float(x) * 3 for x in v]}
                for i, v in enumerate(vectors)]  # not normalised: the client must normalise
        if fake.shuffle:
            data.reverse()
        self.send_json(200, {"object": "list", "data": data, "model": req["model"],
                         "usage": {"prompt_tokens": 1, "total_tokens": 1}})


class FakeEmbeddingsAPI(fake_http.FakeServer):
    handler = _Handler
    name = "fake-embeddings"
    api_root = "/v1"

    def __init__(self, api_key: str = "", fail_status: int = 0) -> None:
        super().__init__()
        self.api_key = api_key
        self.fail_status = fail_status
        self.shuffle = False  # answer data out of order (clients must sort by index)
        self.model = FakeEmbedder()

    @property
    def url(self) -> str:
        return self.base_url
