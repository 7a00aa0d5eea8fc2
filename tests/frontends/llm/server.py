"""A scripted OpenAI-compatible server for the LLM frontend's tests: /v1/chat/completions answers
each request with the next scripted step (a reply text, an HTTP error, a delay, or a reply that
never ends: one byte every `drip_s` seconds of its headers or its body) and records every request
body, so a test can check what reached the model. 127.0.0.1 only; no network."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Step:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict = field(default_factory=dict)
    drip: str = ""  # "headers" | "body": send that part one byte every drip_s, never ending
    drip_s: float = 0.2
    body: bytes | None = None  # sent as the response body instead of a chat completion


def reply(text: str) -> Step:
    return Step(text=text)


class ScriptedServer:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    step = (
                        server.steps.pop(0)
                        if server.steps
                        else Step(status=500, text="script exhausted")
                    )
                if self.path.rstrip("/") != "/v1/chat/completions":
                    step = Step(status=404, text=f"no route {self.path}")
                time.sleep(step.delay_s)
                if step.drip:
                    self.drip(step)
                    return
                if step.status == 200:
                    payload = {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": step.text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": 100,
                            "completion_tokens": 50,
                            "total_tokens": 150,
                        },
                    }
                else:
                    payload = {
                        "error": {
                            "message": step.text or f"status {step.status}",
                            "type": "scripted",
                        }
                    }
                data = json.dumps(payload).encode() if step.body is None else step.body
                try:
                    self.send_response(step.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def drip(self, step: Step) -> None:
                """A response that never completes: its headers, or after them its body, one byte
                every step.drip_s until the client leaves or the server stops."""
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    if step.drip == "headers":
                        self.wfile.write(b"x-slow: ")
                    else:
                        self.wfile.write(b"content-type: application/json\r\ncontent-length: 1000000\r\n\r\n")
                    while not server.stopping.wait(step.drip_s):
                        self.wfile.write(b"a" if step.drip == "headers" else b" ")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":  # serve files' contents as replies, for trying the CLI by hand
    import sys

    with ScriptedServer([reply(open(p).read()) for p in sys.argv[1:]]) as s:
        print(s.url, flush=True)
        s.thread.join()
