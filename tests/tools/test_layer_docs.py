"""docs/architecture.md's two layer tables and tools/check_layers.py's table agree row for row:
the same layers, each with the same uses (the checker is what the build enforces; the docs are
what a reader trusts)."""
import os
import re
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
import check_layers  # noqa: E402
from farmtools import ROOT  # noqa: E402

ROW = re.compile(r"^\| `([a-z_]+)/` \|.*\| ([^|]*) \|\s*$")


def doc_tables():
    """{"renderer/scene": {"renderer/math"}, "farm/job": {...}, ...} from the markdown."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    tables = {}
    for library, heading in (("renderer", "### The renderer, bottom to top"), ("farm", "### The farm, bottom to top")):
        start = text.index(heading)
        end = text.find("\n#", start + len(heading))
        for line in text[start:end if end >= 0 else len(text)].splitlines():
            m = ROW.match(line)
            if not m:
                continue
            uses = set()
            for use in (u.strip() for u in m.group(2).split(",")):
                if use in ("", "-"):
                    continue
                uses.add(use if "/" in use else f"{library}/{use}")
            tables[f"{library}/{m.group(1)}"] = uses
    return tables


class LayerDocsTest(unittest.TestCase):
    def test_the_docs_list_the_checker_layers_and_uses(self):
        docs = doc_tables()
        self.assertEqual(sorted(docs), sorted(check_layers.USES))
        for layer, uses in check_layers.USES.items():
            self.assertEqual(docs[layer], set(uses), f"docs/architecture.md's row for {layer}")


if __name__ == "__main__":
    unittest.main()
