"""Drives the real, unmodified Moralis Python SDK against a server and prints what it got.

The Python twin of tests/clients/harness.js, with the same input and output, driven by
tests/api/sdk_clients/. Usage (the SDK is installed from the pinned, hashed requirements.txt
beside this file into a virtualenv by scripts/test):

    $VENV/bin/python tests/clients/moralis-py/run.py BASE_URL < input.json

BASE_URL is where the SDK sends its requests instead of https://deep-index.moralis.io/api/v2.2
(e.g. http://127.0.0.1:PORT/api/v2.2). input.json: {"apiKey": "...", "calls": [{"name": "...",
"op": "nft.get_nft_owners", "params": {...}}]}. `op` is `group.function` of `moralis.evm_api`;
it is called as `moralis.evm_api.<group>.<function>(api_key=..., params=params)` (only
`api_key=...` for a function that takes no parameters; a call with a `"body"` passes it as
`body=...`, as the SDK's POST operations take it).

Paging: the SDK has no `next()`; its callers page by passing the `cursor` of a page back as the
`cursor` parameter, which is what this script does while a page is a JSON object with a
non-empty `cursor`. A bare JSON array (`get_wallet_token_balances`) is one page.

The base URL: the SDK has no option for it. Each call builds a fresh
`openapi_evm_api.Configuration()` with no arguments, whose `host` then defaults to Moralis. The
one thing this script changes is that default: `Configuration.__init__` is wrapped so that a
configuration made without a `host` gets BASE_URL, as `Configuration(host=BASE_URL)` would. No
SDK file is modified, and nothing else of the SDK is touched. Requests are watched passively,
through CPython's `http.client.send` audit event.

Output, on stdout, one JSON document:

    {"sdk": {"moralis": "0.1.49", "python": "3.11.7"},
     "calls": [{"name", "op", "params",
                "pages": [{"raw": <the parsed body>, "result": [<records>], "hasNext": bool}],
                "requests": [{"method", "path", "headers"}],
                "error": null | {"name", "message", "status", "body"}}]}

`result` is the page's `result` array (the whole body when it is an array): the SDK returns the
parsed body as it is (it calls the API with `skip_deserialization=True`). The API key is
written as "<api key>" in the recorded headers. Anything the SDK prints goes to stderr, so
stdout stays one JSON document. Exit status: 0 when the input could be run (an SDK error is
reported in its call), 2 on bad usage, 1 when the script itself failed.
"""

import importlib.metadata
import inspect
import json
import platform
import sys

# At most this many pages per call: a loop guard.
MAX_PAGES = 500


def describe_error(e):
    """An SDK error as JSON: our status and body when the server answered."""
    status = getattr(e, "status", None)
    body = getattr(e, "body", None)
    if isinstance(body, (bytes, bytearray)):
        text = body.decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = text
    return {
        "name": type(e).__name__,
        "message": str(e),
        "status": status if isinstance(status, int) else None,
        "body": body,
    }


def parse_request(data, api_key):
    """The request line and headers of what http.client sent, or None for a body."""
    if not isinstance(data, (bytes, bytearray)):
        return None
    head = bytes(data).split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        value = value.strip().replace(api_key, "<api key>")
        # A repeated header is kept as its values joined, as Node's getHeaders() shows them.
        key = name.strip().lower()
        headers[key] = value if key not in headers else headers[key] + ", " + value
    return {"method": parts[0], "path": parts[1], "headers": headers}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write('usage: python run.py BASE_URL < {"apiKey": ..., "calls": [...]}\n')
        return 2
    base_url = sys.argv[1]
    data = json.loads(sys.stdin.read())
    api_key = data.get("apiKey") if isinstance(data, dict) else None
    calls = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(api_key, str) or not isinstance(calls, list):
        sys.stderr.write('stdin must be {"apiKey": "...", "calls": [...]}\n')
        return 2

    # Whatever the SDK prints must not corrupt the JSON on stdout.
    stdout = sys.stdout
    sys.stdout = sys.stderr

    import moralis.evm_api
    import openapi_evm_api

    # The base URL: the default host of a configuration made without one (see above).
    configuration = openapi_evm_api.Configuration
    sdk_init = configuration.__init__

    def init_with_base_url(self, host=None, *args, **kwargs):
        sdk_init(self, base_url if host is None else host, *args, **kwargs)

    configuration.__init__ = init_with_base_url

    requests = []

    def watch(event, args):
        if event == "http.client.send":
            r = parse_request(args[1], api_key)
            if r is not None:
                requests.append(r)

    sys.addaudithook(watch)

    out = []
    for call in calls:
        op = str(call.get("op"))
        params = call.get("params") or {}
        got = {
            "name": call.get("name"),
            "op": op,
            "params": params,
            "pages": [],
            "requests": [],
            "error": None,
        }
        requests.clear()
        try:
            group, _, function = op.partition(".")
            fn = getattr(getattr(moralis.evm_api, group, None), function, None)
            if not callable(fn):
                raise AttributeError(f"moralis.evm_api.{op} does not exist in this SDK")
            page_params = dict(params)
            while True:
                # The calls without parameters (web3_api_version, endpoint_weights) take none.
                if "body" in call:
                    body = fn(api_key=api_key, params=page_params, body=call["body"])
                elif "params" in inspect.signature(fn).parameters:
                    body = fn(api_key=api_key, params=page_params)
                else:
                    body = fn(api_key=api_key)
                cursor = body.get("cursor") if isinstance(body, dict) else None
                has_next = isinstance(cursor, str) and cursor != ""
                result = body.get("result") if isinstance(body, dict) else body
                got["pages"].append({"raw": body, "result": result, "hasNext": has_next})
                if not has_next:
                    break
                if len(got["pages"]) >= MAX_PAGES:
                    raise RuntimeError(f"more than {MAX_PAGES} pages")
                page_params = dict(params, cursor=cursor)
        except Exception as e:  # an SDK error is part of the report
            got["error"] = describe_error(e)
        got["requests"] = list(requests)
        out.append(got)

    sdk = {
        "moralis": importlib.metadata.version("moralis"),
        "python": platform.python_version(),
    }
    stdout.write(json.dumps({"sdk": sdk, "calls": out}) + "\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
