#!/usr/bin/python3
"""Serve the page make web writes (build/web) on 127.0.0.1 with the two
headers that let a browser give it SharedArrayBuffer, which WebAssembly
threads need: Cross-Origin-Opener-Policy: same-origin and
Cross-Origin-Embedder-Policy: require-corp. python3 -m http.server sends
neither: the page then runs its one-thread build (attnviz-st.js).

usage: serve.py [--port N] [--bind ADDR] [DIR]   (DIR: this file's folder)
"""
import argparse
import functools
import http.server
import os
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            super().log_message(fmt, *args)


def main():
    ap = argparse.ArgumentParser(description="serve attnviz's page with the headers threads need")
    ap.add_argument("--port", type=int, default=8000, help="0: any free port (printed)")
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--quiet", action="store_true", help="no line per request")
    ap.add_argument("dir", nargs="?", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.dir, "attnviz.js")):
        sys.exit(f"serve.py: {a.dir} has no attnviz.js: run make web first")
    srv = http.server.ThreadingHTTPServer((a.bind, a.port), functools.partial(Handler, directory=a.dir))
    srv.quiet = a.quiet
    host, port = srv.server_address[:2]
    print(f"serving {a.dir} at http://{host}:{port}/attnviz.html", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
