"""Names from model files in the generated C: comments, identifiers and the prefix.

Model files come from other people, so a robot, link, joint, frame or parameter name must
never change the meaning of the generated C. Two functions are the only way a name reaches
the C text:

- :func:`c_comment_text` renders any text for a ``/* ... */`` comment: printable ASCII,
  never ``*/``, ``/*``, ``??`` (trigraphs, e.g. ``??/`` is a backslash under ``-std=c99``), a
  newline or a trailing backslash. Escapes start with a backslash: ``\\x5c`` (backslash),
  ``\\/`` and ``\\*`` (the second character of ``*/`` and ``/*``), ``\\?`` (the second ``?``
  of ``??``), ``\\u00e4`` / ``\\U0001f600`` (any other character that is not printable ASCII,
  newlines and controls included).
- :func:`c_identifier` turns any name into a C identifier fragment, deterministically:
  Unicode compatibility decomposition (NFKD) with combining marks dropped (``ärm`` → ``arm``,
  ``l²`` → ``l2``), ASCII letters, digits and ``_`` kept, other ASCII characters → ``_``,
  any other character → ``_u<hex code point>_`` (``腕`` → ``u8155``), then runs of ``_``
  collapsed to one and leading/trailing ``_`` removed (so no ``__`` and no leading ``_``,
  which C and C++ reserve); an empty result is ``x``. Different names may give the same
  fragment (``tool-1``, ``tool_1``): :func:`symgen.generate.generate` keeps kernel names
  distinct.

The prefix of every C symbol (:func:`check_prefix`) must be an ASCII C identifier that starts
with a letter, has no ``__``, does not end in ``_`` and is not a C keyword; the default
(:func:`default_prefix`) is derived from the model name and always satisfies this.
"""

from __future__ import annotations

import re
import unicodedata

from symgen.errors import SymgenError

#: Keywords of C99, C11 and C23 (a prefix may not be one).
C_KEYWORDS = frozenset({
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "_Bool", "_Complex", "_Imaginary",
    "_Alignas", "_Alignof", "_Atomic", "_Generic", "_Noreturn", "_Static_assert", "_Thread_local",
    "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
    "thread_local", "true", "typeof", "typeof_unqual", "_BitInt", "_Decimal32", "_Decimal64",
    "_Decimal128",
})

_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _escape_char(ch: str) -> str:
    if ch == "\\":
        return "\\x5c"
    if ch in _PRINTABLE:
        return ch
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def c_comment_text(text: str) -> str:
    """``text`` made safe inside a C block comment (rules in the module docstring)."""
    out: list[str] = []
    for ch in text:
        piece = _escape_char(ch)
        prev = out[-1][-1] if out else ""
        if (prev, piece) in (("*", "/"), ("/", "*"), ("?", "?")):
            piece = "\\" + piece
        out.append(piece)
    return "".join(out)


def c_name_text(name: str) -> str:
    """A model name for a comment: as is when it is plain (letters, digits, ``_ . - :``),
    else quoted (``'a b'``) with :func:`c_comment_text` escapes (a quote is ``\\x27``)."""
    if re.fullmatch(r"[A-Za-z0-9_.:-]+", name):
        return name
    return "'" + c_comment_text(name).replace("'", "\\x27") + "'"


def c_identifier(name: str) -> str:
    """``name`` as a C identifier fragment (rules in the module docstring); case is kept."""
    decomposed = unicodedata.normalize("NFKD", name)
    parts = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        if ch.isascii():
            parts.append(ch if ch.isalnum() or ch == "_" else "_")
        else:
            parts.append(f"_u{ord(ch):04x}_")
    ident = re.sub(r"_+", "_", "".join(parts)).strip("_")
    return ident or "x"


def prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot prefix the C symbols, or None when it can."""
    if not prefix.isascii() or not _PREFIX.match(prefix):
        return "it must be an ASCII C identifier starting with a letter ([A-Za-z][A-Za-z0-9_]*)"
    if "__" in prefix or prefix.endswith("_"):
        return "a double underscore (C and C++ reserve such names) or a trailing underscore"
    if prefix in C_KEYWORDS:
        return "it is a C keyword"
    return None


def check_prefix(prefix: str) -> str:
    """``prefix`` unchanged, or a :class:`SymgenError` saying why it is not a valid prefix."""
    problem = prefix_problem(prefix)
    if problem is not None:
        raise SymgenError(f"invalid C prefix {prefix!r}: {problem}")
    return prefix


def default_prefix(model_name: str) -> str:
    """The default prefix: ``model_name`` as a lower-case :func:`c_identifier`, with ``m_``
    in front when that starts with a digit or is a C keyword (``1 a-b`` → ``m_1_a_b``)."""
    ident = c_identifier(model_name).lower()
    if ident[0].isdigit() or ident in C_KEYWORDS:
        ident = f"m_{ident}"
    return ident


__all__ = [
    "C_KEYWORDS",
    "c_comment_text",
    "c_identifier",
    "c_name_text",
    "check_prefix",
    "default_prefix",
    "prefix_problem",
]
