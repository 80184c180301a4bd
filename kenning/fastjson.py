"""JSON for the hook path without importing ``json`` (and with it ``re`` and ``enum``).

``import json`` costs a hook process ~8-13 ms here, more than everything else it does. The
C accelerators in ``_json`` need no ``re``: this module drives them directly, and falls back
to the ``json`` module on interpreters without ``_json``. Output is compact ASCII JSON.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_scan: Any = None
_encode: Any = None
_encode_utf: Any = None
try:
    import _json

    class _Context:
        # The attributes _json.make_scanner reads from json.JSONDecoder.
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = float  # NaN, Infinity, -Infinity

    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    _encode = _json.make_encoder(None, None, _json.encode_basestring_ascii,  # type: ignore[arg-type]
                                 None, ":", ",", False, False, True)
    _encode_utf = _json.make_encoder(None, None, _json.encode_basestring,  # type: ignore[arg-type]
                                     None, ":", ",", False, False, True)
except (ImportError, AttributeError, TypeError):  # pragma: no cover - non-CPython
    pass

_WS = " \t\n\r"


def loads(text: str) -> Any:
    """Parse one JSON document; raises ValueError when it is not valid JSON."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    i = 0
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    try:
        value, end = _scan(text, i)
    except StopIteration:
        raise ValueError("not JSON") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except SystemError:
        # _json reports most syntax errors with json.decoder.JSONDecodeError, which it looks up in
        # sys.modules only: where `json` was never imported (the hook) CPython raises SystemError.
        import json

        return json.loads(text)  # the same text: raises the proper ValueError (JSONDecodeError)
    while end < n and text[end] in _WS:
        end += 1
    if end != n:
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: Any, *, ensure_ascii: bool = True) -> str:
    """Compact JSON; ASCII-only unless ``ensure_ascii`` is false (then non-ASCII text stays as is)."""
    encode = _encode if ensure_ascii else _encode_utf
    if encode is None:  # pragma: no cover
        import json

        return json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii)
    return "".join(encode(value, 0))
