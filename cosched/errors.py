"""The one error type raised at input boundaries (files, matrices, permissions)."""

from __future__ import annotations

__all__ = ["InputError", "MESSAGE_CHARS", "message_line"]

MESSAGE_CHARS = 500  # of an exception's message from user code, the most an error line repeats


class InputError(ValueError):
    """Bad input: names the source (file), the field and/or line; the CLI turns it into exit code
    2."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        field: str | None = None,
        line: int | None = None,
    ):
        self.message, self.source, self.field, self.line = message, source, field, line
        where = [str(source)] if source else []
        if line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field '{field}'")
        text = f"{', '.join(where)}: {message}" if where else message
        super().__init__(text if text.isprintable() else _escaped(text))

    def naming(self, source: str) -> InputError:
        """This error, or a copy naming `source` when it names no file yet (raised below a file
        loader)."""
        if self.source is not None:
            return self
        return InputError(self.message, source=source, field=self.field, line=self.line)


def _escaped(text: str) -> str:
    """`text` with its control characters (a line break in a JSON key, an exception message)
    written as escapes: the error stays one line."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def message_line(text: str) -> str:
    """A message from user code (an algorithm or plug-in file's exception) on one line, cut after
    MESSAGE_CHARS characters, saying so."""
    head = text[: 4 * MESSAGE_CHARS]  # a huge message is not split into lines whole
    line = " | ".join(part.strip() for part in head.splitlines() if part.strip())
    if len(line) <= MESSAGE_CHARS and len(head) == len(text):
        return line
    return f"{line[:MESSAGE_CHARS]}... (cut: the message has {len(text):,} characters)"
