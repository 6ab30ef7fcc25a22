"""Documents to chunks: text, Markdown, PDF and HTML files through LangChain loaders and splitters.

Each file is read by a LangChain document loader (``TextLoader`` for text and Markdown,
``PyPDFLoader`` for PDF, ``BSHTMLLoader`` with the standard-library HTML parser for HTML, leaving
out the head, scripts and styles) and cut by a ``RecursiveCharacterTextSplitter`` (Markdown-aware
for ``.md``). A chunk's id is
``<document key>#<n>``, where the key is the file's name (or its path inside a directory given
on the command line), so the passages of a KB name the document and place they came from.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridrag.kb.model import KBError

log = logging.getLogger(__name__)

LOADERS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
}
HIDDEN_HTML = ["script", "style", "template", "noscript", "head"]  # text a reader never sees
BLOCK_HTML = [
    "p",
    "div",
    "li",
    "br",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "table",
    "ul",
    "ol",
    "dt",
    "dd",
    "hr",
]
MAX_FILES = 100_000  # a directory walk stops with an error beyond this many documents
CHUNK_SIZE, CHUNK_OVERLAP = 1000, 150  # characters: the defaults of every document ingest


class DocumentError(KBError):
    """A document cannot be used: unsupported, unreadable, malformed or empty (names the file)."""


@dataclass(frozen=True)
class SourceDocument:
    """One input file: its key in the KB, where it was read, what it holds."""

    key: str
    path: Path
    kind: str  # text | markdown | pdf | html
    sha256: str


@dataclass(frozen=True)
class Chunk:
    """A piece of a document that becomes one passage of the KB."""

    id: str
    doc: str
    text: str
    page: int | None = None
    start: int | None = None


def file_digest(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _source(path: Path, key: str) -> SourceDocument:
    kind = LOADERS.get(path.suffix.lower())
    if kind is None:
        raise DocumentError(
            f"{path}: unsupported document type {path.suffix or '(no suffix)'!r}; "
            f"supported: {', '.join(sorted(LOADERS))}"
        )
    return SourceDocument(key, path, kind, file_digest(path))


def find_documents(paths: Sequence[str | Path]) -> tuple[list[SourceDocument], list[str]]:
    """Expand files and directories into documents; return them and warnings.

    A named file must have a supported suffix; inside a directory, other files are skipped
    and counted in a warning. Two inputs with the same key are an error.
    """
    if not paths:
        raise DocumentError("no documents given")
    found: list[SourceDocument] = []
    warnings: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            usable = [p for p in files if p.suffix.lower() in LOADERS]
            if len(files) > len(usable):
                warnings.append(
                    f"{path}: skipped {len(files) - len(usable)} files that are not "
                    f"{'/'.join(sorted(LOADERS))} documents"
                )
            found += [_source(p, p.relative_to(path).as_posix()) for p in usable]
        elif path.is_file():
            found.append(_source(path, path.name))
        else:
            raise DocumentError(f"{path}: no such file or directory")
        if len(found) > MAX_FILES:
            raise DocumentError(f"more than {MAX_FILES} documents under {path}; ingest them in parts")
    keys: dict[str, Path] = {}
    for doc in found:
        if doc.key in keys:
            raise DocumentError(f"two documents share the key {doc.key!r}: {keys[doc.key]} and {doc.path}; rename one")
        keys[doc.key] = doc.path
    return found, warnings


@functools.cache
def _html_loader_class() -> type:
    """``BSHTMLLoader`` that leaves out what a browser does not show as text (scripts, styles...)."""
    from bs4 import BeautifulSoup
    from langchain_community.document_loaders import BSHTMLLoader
    from langchain_core.documents import Document

    class VisibleTextHTMLLoader(BSHTMLLoader):
        def lazy_load(self):
            with open(self.file_path, encoding=self.open_encoding) as f:
                soup = BeautifulSoup(f, **self.bs_kwargs)
            title = str(soup.title.string) if soup.title and soup.title.string else ""
            for hidden in soup(HIDDEN_HTML):
                hidden.decompose()
            for block in soup(BLOCK_HTML):  # a line break after each block, none inside a sentence
                block.insert_after("\n")
            text = "\n".join(" ".join(line.split()) for line in soup.get_text().splitlines())
            yield Document(page_content=text, metadata={"source": str(self.file_path), "title": title})

    return VisibleTextHTMLLoader


def _loader(doc: SourceDocument):
    from langchain_community.document_loaders import PyPDFLoader, TextLoader

    if doc.kind == "pdf":
        return PyPDFLoader(str(doc.path), mode="page")
    if doc.kind == "html":
        return _html_loader_class()(doc.path, open_encoding="utf-8", bs_kwargs={"features": "html.parser"})
    return TextLoader(str(doc.path), encoding="utf-8")


def load_pages(doc: SourceDocument) -> list[tuple[int | None, str]]:
    """The text of a document as (page or None, text) pieces; errors name the file and the problem."""
    try:
        loaded = _loader(doc).load()
    except Exception as exc:  # noqa: BLE001 - loaders raise anything from RuntimeError to PdfReadError
        cause = exc.__cause__ or exc
        if isinstance(cause, UnicodeDecodeError):
            raise DocumentError(f"{doc.path}: not UTF-8 text ({cause.reason} at byte {cause.start})") from None
        detail = " ".join(str(cause).split())[:200] or type(cause).__name__
        raise DocumentError(f"{doc.path}: cannot read as {doc.kind}: {type(cause).__name__}: {detail}") from None
    pages = []
    for n, piece in enumerate(loaded):
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in piece.page_content.splitlines()))
        page = piece.metadata.get("page", n) if doc.kind == "pdf" else None
        if text.strip():
            pages.append((page, text.strip()))
    if not pages:
        hint = " (a scanned PDF without a text layer? run OCR first)" if doc.kind == "pdf" else ""
        raise DocumentError(f"{doc.path}: empty document, no text found{hint}")
    return pages


def _splitter(kind: str, chunk_size: int, chunk_overlap: int):
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    options: dict[str, Any] = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "add_start_index": True}
    if kind == "markdown":
        return RecursiveCharacterTextSplitter.from_language(Language.MARKDOWN, **options)
    return RecursiveCharacterTextSplitter(**options)


def check_chunking(chunk_size: int, chunk_overlap: int) -> None:
    """Chunk size at least 50 characters; overlap from 0 to below half the size."""
    if chunk_size < 50:
        raise ValueError(f"--chunk-size must be at least 50 characters, not {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size // 2:
        raise ValueError(
            f"--chunk-overlap must be from 0 to below half the chunk size ({chunk_size // 2}), not {chunk_overlap}"
        )


def chunk_pages(
    key: str,
    kind: str,
    pages: Sequence[tuple[int | None, str]],
    chunk_size: int = CHUNK_SIZE,
    chunk_overlap: int = CHUNK_OVERLAP,
) -> list[Chunk]:
    """Split a document's (page or None, text) pieces into chunks with ids ``<key>#<n>``.

    The splitter every document goes through: files (:func:`chunk_document`) and texts that
    arrive as data, such as SSRAG's web pages (key: the page URL, kind ``text``).
    """
    check_chunking(chunk_size, chunk_overlap)
    splitter = _splitter(kind, chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    for page, text in pages:
        for piece in splitter.create_documents([text]):
            body = piece.page_content.strip()
            if body:
                chunks.append(Chunk(f"{key}#{len(chunks)}", key, body, page, piece.metadata.get("start_index")))
    return chunks


def chunk_document(
    doc: SourceDocument, chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP
) -> list[Chunk]:
    """Load one document and split it into chunks with ids ``<key>#<n>``."""
    check_chunking(chunk_size, chunk_overlap)
    return chunk_pages(doc.key, doc.kind, load_pages(doc), chunk_size, chunk_overlap)
