"""Reading a CSV file someone uploads: the one reader of the CTR import (ctr.bulk.csv_import)
and the art. 23 penalty table (fiscalization.penalty_table).

UTF-8 or Latin-1 (what Excel in Portuguese saves), `;` or `,` (whichever separates the
header), a header of column names, blank lines skipped, a size and a row limit, and every
failure a CSVFileError in Portuguese. What a row means is the caller's.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from config.br import br_number
from config.errors import DomainError

MAX_BYTES = 2 * 1024 * 1024
MAX_ROWS = 5000


class CSVFileError(DomainError):
    """The file as a whole cannot be read: nothing is done with it."""

    code = "csv_file"
    # The rows that refuse the file, each with its problems, when it is refused for them
    # (the caller's row results: ctr.bulk.csv_format.RowResult).
    rows: tuple = ()


def check_size(size: int) -> None:
    if size > MAX_BYTES:
        shown = br_number(round(Decimal(size) / 1024 / 1024, 1), grouping=False)
        raise CSVFileError(
            f"O arquivo tem {shown} MB; o limite é {MAX_BYTES // 1024 // 1024} MB. "
            "Divida-o em arquivos menores."
        )


def decode(data: bytes) -> tuple[str, str]:
    """The text and its encoding: UTF-8 (a BOM is dropped), else Latin-1. A NUL byte means a
    binary file (a spreadsheet saved as .xlsx, an image), which no CSV contains."""
    if not data.strip():
        raise CSVFileError("O arquivo está vazio.")
    if b"\x00" in data:
        raise CSVFileError(BINARY_MESSAGE)
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        # Latin-1 decodes any byte: Excel in Portuguese saves CSV in Windows-1252/Latin-1.
        return data.decode("latin-1"), "latin-1"


BINARY_MESSAGE = (
    "O arquivo não é um CSV de texto (parece um arquivo binário, como uma planilha "
    ".xlsx). Na planilha, use “Salvar como” e escolha CSV."
)


def sniff_delimiter(header_line: str) -> str:
    """';' or ',', whichever separates the header. The header, not the data: a decimal comma
    in the data would fool a sniffer that counts commas in the rows."""
    return ";" if header_line.count(";") >= header_line.count(",") else ","


def read_header(
    reader,
    required: tuple[str, ...],
    known: tuple[str, ...],
    aliases: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """(columns, ignored columns) from the reader's first row, or CSVFileError. A column named
    by one of `aliases` (another name -> the column's) reads as that column when it is `known`;
    `labels` name a missing required column in the message (its name -> what the user calls
    it)."""
    aliases, labels = aliases or {}, labels or {}
    header = next(reader, None)
    if not header or not any(cell.strip() for cell in header):
        raise CSVFileError("O arquivo não tem a linha de cabeçalho com os nomes das colunas.")
    columns = [cell.strip().lower().lstrip("\ufeff") for cell in header]
    columns = [aliases[c] if c in aliases and aliases[c] in known else c for c in columns]
    duplicated = sorted({c for c in columns if c and columns.count(c) > 1})
    if duplicated:
        raise CSVFileError(f"Coluna(s) repetida(s) no cabeçalho: {', '.join(duplicated)}.")
    missing = [f"{labels[c]} ({c})" if c in labels else c for c in required if c not in columns]
    if missing:
        raise CSVFileError(
            f"Faltam colunas obrigatórias no cabeçalho: {', '.join(missing)}. "
            "A primeira linha do arquivo deve ter os nomes das colunas "
            f"(separados por “{reader.dialect.delimiter}”)."
        )
    return columns, [c for c in columns if c and c not in known]


def records(reader, columns: list[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for each non-blank row after the header (the header is line 1)."""
    named = [(i, name) for i, name in enumerate(columns) if name]
    width = len(columns)
    line = 1
    for cells in reader:
        line += 1
        if not any(cell.strip() for cell in cells):
            continue  # a blank line (spreadsheets leave some at the end)
        count = len(cells)
        row = {name: (cells[i].strip() if i < count else "") for i, name in named}
        if count > width and any(c.strip() for c in cells[width:]):
            row["__extra__"] = "1"
        yield line, row


def read_rows(
    text: str,
    required: tuple[str, ...],
    known: tuple[str, ...],
    noun: str,
    aliases: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> tuple[list[str], list[tuple[int, dict[str, str]]], str, list[str]]:
    """(columns, [(line, row)], delimiter, ignored columns) or CSVFileError; `noun` names a
    row in the messages ("linhas de CTR"); the header as read_header reads it."""
    first_line = text.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = sniff_delimiter(first_line)
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""), delimiter=delimiter)
    try:
        columns, ignored = read_header(reader, required, known, aliases, labels)
        rows: list[tuple[int, dict[str, str]]] = []
        for line, row in records(reader, columns):
            if len(rows) >= MAX_ROWS:
                raise CSVFileError(
                    f"O arquivo tem mais de {MAX_ROWS} linhas {noun}; divida-o em arquivos menores."
                )
            rows.append((line, row))
    except csv.Error as error:
        raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
    if not rows:
        raise CSVFileError(f"O arquivo só tem o cabeçalho: nenhuma linha {noun}.")
    return columns, rows, delimiter, ignored


@dataclass
class StreamedFile:
    """A CSV file read as it goes (the command's big files): nothing but the current rows in
    memory. `rows` raises CSVFileError if the CSV breaks further down."""

    path: Path
    encoding: str
    delimiter: str
    columns: list[str]
    ignored: list[str]
    noun: str
    _reader: object = None
    _file: object = None

    def rows(self) -> Iterator[tuple[int, dict[str, str]]]:
        count = 0
        try:
            for item in records(self._reader, self.columns):
                count += 1
                yield item
        except csv.Error as error:
            raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
        if not count:
            raise CSVFileError(f"O arquivo só tem o cabeçalho: nenhuma linha {self.noun}.")

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> StreamedFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def sniff_encoding(path: Path, block: int = 1 << 20) -> str:
    """The encoding `decode` would choose, read block by block (the file is not held in
    memory): UTF-8 when the whole file decodes, else Latin-1; CSVFileError when it is empty or
    binary."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    blank = True
    with open(path, "rb") as stream:
        while chunk := stream.read(block):
            if b"\x00" in chunk:
                raise CSVFileError(BINARY_MESSAGE)
            blank = blank and not chunk.strip()
            if utf8:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    utf8 = False
    if blank:
        raise CSVFileError("O arquivo está vazio.")
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    return "utf-8" if utf8 else "latin-1"


def open_stream(
    path: Path,
    required: tuple[str, ...],
    known: tuple[str, ...],
    noun: str,
    aliases: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> StreamedFile:
    """Open a CSV file of any size for reading row by row, with the same rules as `read_rows`
    (encoding, delimiter, header) but no limit on the number of rows."""
    encoding = sniff_encoding(path)
    # Open for the caller: StreamedFile.close (or a with block) closes it.
    stream = open(path, encoding="utf-8-sig" if encoding == "utf-8" else "latin-1", newline="")  # noqa: SIM115
    try:
        head = ""
        while "\n" not in head and (piece := stream.read(65536)):
            head += piece
        delimiter = sniff_delimiter(head.lstrip("\ufeff").split("\n", 1)[0])
        stream.seek(0)
        reader = csv.reader(stream, delimiter=delimiter)
        try:
            columns, ignored = read_header(reader, required, known, aliases, labels)
        except csv.Error as error:
            raise CSVFileError(f"O arquivo não pôde ser lido como CSV: {error}.") from None
    except BaseException:
        stream.close()
        raise
    return StreamedFile(path, encoding, delimiter, columns, ignored, noun, reader, stream)
