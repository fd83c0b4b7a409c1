"""Unit tests of chronomap.scraper; the CSV cases are shared with the Node helper's tests."""

import contextlib
import io
import json
import os
import pathlib
import tempfile
import unittest
from unittest import mock

from chronomap.scraper import Output, format_value

VECTORS = json.loads((pathlib.Path(__file__).parents[2] / "csv-test-vectors.json").read_text("utf-8"))


def quiet_output(rows):
    out = Output()
    with contextlib.redirect_stderr(io.StringIO()):
        out.write_rows(rows)
    return out


class SharedVectors(unittest.TestCase):
    def test_same_csv_as_the_node_helper(self):
        for case in VECTORS:
            with self.subTest(case["name"]):
                self.assertEqual(quiet_output(case["rows"]).to_csv_string(), case["csv"])


class OutputBehaviour(unittest.TestCase):
    def test_row_count_counts_every_row(self):
        out = Output()
        self.assertEqual(out.row_count, 0)
        out.write_row({"a": 1})
        out.write_rows([{"a": 2}, {"a": 3}])
        self.assertEqual(out.row_count, 3)

    def test_extra_keys_warn_once_per_key(self):
        out = Output()
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            out.write_row({"a": 1})
            out.write_row({"a": 2, "b": 3})
            out.write_row({"a": 4, "b": 5})
        self.assertEqual(err.getvalue().count("'b'"), 1)
        self.assertEqual(out.to_csv_string(), "a\r\n1\r\n2\r\n4\r\n")

    def test_rejects_non_dict_rows_and_an_empty_first_row(self):
        with self.assertRaises(TypeError):
            Output().write_row(["a", "b"])
        with self.assertRaises(ValueError):
            Output().write_row({})

    def test_dates_use_isoformat(self):
        import datetime

        self.assertEqual(format_value(datetime.date(2026, 5, 1)), "2026-05-01")

    def test_save_writes_nothing_before_it_is_called_and_uses_the_runner_variables(self):
        with tempfile.TemporaryDirectory() as d:
            out = Output()
            out.write_row({"title": "x"})
            self.assertEqual(os.listdir(d), [])
            with mock.patch.dict(os.environ, {"CHRONOMAP_OUTPUT_DIR": d, "CHRONOMAP_OUTPUT_FILE": "events.csv"}):
                path = out.save()
            self.assertEqual(path, os.path.join(d, "events.csv"))
            self.assertEqual(pathlib.Path(path).read_bytes(), b"title\r\nx\r\n")
            self.assertEqual(sorted(os.listdir(d)), ["events.csv"])

    def test_save_filename_overrides_and_default_is_data_csv(self):
        with tempfile.TemporaryDirectory() as d:
            out = Output()
            out.write_row({"a": "b"})
            with mock.patch.dict(os.environ, {"CHRONOMAP_OUTPUT_DIR": d}, clear=False):
                os.environ.pop("CHRONOMAP_OUTPUT_FILE", None)
                self.assertEqual(out.save(), os.path.join(d, "data.csv"))
                self.assertEqual(out.save("other.csv"), os.path.join(d, "other.csv"))


if __name__ == "__main__":
    unittest.main()
