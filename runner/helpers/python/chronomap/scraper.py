"""Collects rows in a scraper and saves them as the CSV the Chronomap runner picks up.

    from chronomap.scraper import output
    output.write_row({"title": "Concert", "date": "2026-05-01", "location": "Berlin"})
    output.save()

The CSV is RFC 4180: comma separated, CRLF line ends, a field is quoted (with inner quotes
doubled) only when it holds a comma, a quote, CR or LF. The header is the keys of the first
row, in their order. A later row missing one of those keys gets an empty field; a key that the
first row did not have is dropped, with one warning on stderr per such key, because a CSV has
one header. Values: None -> empty, True/False -> true/false, numbers as JavaScript prints them
(so this module and the Node package @chronomap/scraper write identical files), dict/list ->
compact JSON, anything else -> str(value).
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Iterable, Mapping

__all__ = ["Output", "output", "format_value", "DEFAULT_OUTPUT_DIR", "DEFAULT_OUTPUT_FILE"]

DEFAULT_OUTPUT_DIR = "/output"
DEFAULT_OUTPUT_FILE = "data.csv"


def _js_number(value: float) -> str:
    """Formats a float the way JavaScript's Number#toString does (shortest round trip)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    all_digits = int_part + frac_part
    significant = all_digits.lstrip("0")
    # n: where the decimal point sits relative to the first significant digit (JS spec's "n").
    n = len(int_part) + int(exp or 0) - (len(all_digits) - len(significant))
    digits = significant.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_text = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp_text
    return sign + digits[0] + "." + digits[1:] + "e" + exp_text


def format_value(value: Any) -> str:
    """Turns one cell value into its text, identically to the Node helper."""
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _quote(text: str) -> str:
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


class Output:
    """Rows collected so far; nothing reaches the disk until save() is called."""

    def __init__(self) -> None:
        self._headers: list[str] | None = None
        self._rows: list[list[str]] = []
        self._warned: set[str] = set()

    @property
    def row_count(self) -> int:
        return len(self._rows)

    @property
    def headers(self) -> list[str]:
        return list(self._headers or [])

    def write_row(self, row: Mapping[str, Any]) -> None:
        if not isinstance(row, Mapping):
            raise TypeError(f"write_row expects a dict, got {type(row).__name__}")
        if self._headers is None:
            if len(row) == 0:
                raise ValueError("the first row must have at least one key: it makes the CSV header")
            self._headers = [str(k) for k in row.keys()]
        for key in row.keys():
            if str(key) not in self._headers and str(key) not in self._warned:
                self._warned.add(str(key))
                print(f"chronomap.scraper: key {key!r} is not in the header (taken from the first row); its values are dropped", file=sys.stderr)
        self._rows.append([format_value(row.get(h)) for h in self._headers])

    def write_rows(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.write_row(row)

    def to_csv_string(self) -> str:
        if self._headers is None:
            return ""
        lines = [self._headers, *self._rows]
        return "".join(",".join(_quote(f) for f in line) + "\r\n" for line in lines)

    def save(self, filename: str | None = None) -> str:
        """Writes the CSV (atomically) and returns its path.

        The file is CHRONOMAP_OUTPUT_FILE (set by the runner from the scraper's `output`), else
        data.csv, in CHRONOMAP_OUTPUT_DIR, else /output. `filename` overrides the file name.
        """
        directory = os.environ.get("CHRONOMAP_OUTPUT_DIR") or DEFAULT_OUTPUT_DIR
        name = filename or os.environ.get("CHRONOMAP_OUTPUT_FILE") or DEFAULT_OUTPUT_FILE
        path = os.path.join(directory, name)
        if self._headers is None:
            print("chronomap.scraper: save() called with no rows; the file has no header and the run will fail", file=sys.stderr)
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        partial = path + ".partial"
        with open(partial, "w", encoding="utf-8", newline="") as f:
            f.write(self.to_csv_string())
        os.replace(partial, path)
        return path


output = Output()
