"""Markdown helpers shared by the report's sections (report.py, backends_stage.py)."""


def f(v, d=2):
    return "" if v is None else f"{v:.{d}f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"
