"""A handful of documents (Markdown, text, HTML, PDF) and the extractions a perfect model would return.

Shared by the document-ingest unit tests and the end-to-end test. With the default chunk size
each document is one chunk, so chunk ``<file>#0`` is the whole document.
"""

from __future__ import annotations

from pathlib import Path

from hybridrag.kb.extract import ExtractedEntity, ExtractedRelation, Extraction

VELTRIX_MD = """\
# Veltrix Robotics

Veltrix Robotics is a drone maker founded by Ada Okafor in 2011.
The company is headquartered in Lisbon.
"""
KESTREL_TXT = "The Kestrel is a survey drone built by Veltrix Robotics. Its chief designer was Tomas Reyes.\n"
OKAFOR_HTML = """\
<html><head><title>Ada Okafor</title></head>
<body><h1>Ada Okafor</h1>
<p>ADA OKAFOR studied engineering at the University of Porto.</p>
<p>Okafor later started a company, Veltrix Robotics.</p></body></html>
"""
LISBON_PDF_LINES = ["Lisbon is the capital of Portugal.", "Veltrix Robotic opened a research lab in Lisbon."]
FILES = ["veltrix.md", "kestrel.txt", "okafor.html", "lisbon.pdf"]


def tiny_pdf(lines: list[str]) -> bytes:
    """A valid one-page PDF showing ``lines`` in Helvetica (written by hand: no PDF library needed)."""
    text = " ".join(f"({line}) Tj T*" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td 14 TL {text} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def write_corpus(folder: Path) -> list[Path]:
    """Write the four documents into ``folder``; return their paths in :data:`FILES` order."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "veltrix.md").write_text(VELTRIX_MD, encoding="utf-8")
    (folder / "kestrel.txt").write_text(KESTREL_TXT, encoding="utf-8")
    (folder / "okafor.html").write_text(OKAFOR_HTML, encoding="utf-8")
    (folder / "lisbon.pdf").write_bytes(tiny_pdf(LISBON_PDF_LINES))
    return [folder / f for f in FILES]


def ent(name: str, kind: str, *aliases: str) -> ExtractedEntity:
    return ExtractedEntity(name=name, type=kind, aliases=list(aliases))


def rel(head: str, relation: str, tail: str) -> ExtractedRelation:
    return ExtractedRelation(head=head, relation=relation, tail=tail)


# one reply per document, in FILES order
EXTRACTIONS = [
    Extraction(
        entities=[
            ent("Veltrix Robotics", "organization"),
            ent("Ada Okafor", "person"),
            ent("Lisbon", "city"),
            ent("2011", "date"),
        ],
        relations=[
            rel("Veltrix Robotics", "founded by", "Ada Okafor"),
            rel("Veltrix Robotics", "headquartered_in", "Lisbon"),
            rel("Veltrix Robotics", "founded_in", "2011"),
        ],
    ),
    Extraction(
        entities=[ent("Kestrel", "product"), ent("veltrix robotics", "company"), ent("Tomas Reyes", "person")],
        relations=[
            rel("Kestrel", "built_by", "veltrix robotics"),
            rel("Kestrel", "designed_by", "Tomas Reyes"),
            rel("Kestrel", "sold_in", "Brazil"),
        ],
    ),  # Brazil: not in the chunk, left out
    Extraction(
        entities=[
            ent("ADA OKAFOR", "person", "Okafor"),
            ent("University of Porto", "university"),
            ent("Veltrix Robotics", "organization"),
        ],
        relations=[
            rel("ADA OKAFOR", "studied_at", "University of Porto"),
            rel("Okafor", "founded", "Veltrix Robotics"),
        ],
    ),
    Extraction(
        entities=[ent("Lisbon", "city"), ent("Portugal", "country"), ent("Veltrix Robotic", "organization")],
        relations=[rel("Lisbon", "capital_of", "Portugal"), rel("Veltrix Robotic", "has_lab_in", "Lisbon")],
    ),
]
