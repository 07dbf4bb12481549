"""The guard for Claude Code's ``Bash`` tool: shell writes into team memory.

A model that the Write guard refuses can try ``echo … > team/x.md`` instead. This
module reads the command as far as its text allows and judges every write it
makes into the team directory with the same policy as a Write
(:func:`teamsync.hooks.guard.check_content`):

* ``>``, ``>>``, ``>|``, ``&>`` redirects, with the content of ``echo``,
  ``printf``, ``cat FILE`` or a heredoc (``cat > team/x.md <<'EOF'``), appended to
  the current file for ``>>``;
* ``tee [-a] FILE…`` fed by such a command through a pipe;
* ``cp``/``mv``/``install SRC… DEST``: the source file's content under the
  destination's name;
* ``touch`` (an empty file), ``cd DIR`` earlier in the command.

Refused without a content check: a write into team memory whose content the
guard cannot see (a variable or command substitution, another program's
output, ``dd of=``, ``sed -i``, ``ln``, a target spelled with ``$``, globs or
``~user``), a program it does not know that is handed a team-memory path, and
any command that runs ``teamsync allow`` (however quoted) or writes a file kept
by people (:mod:`teamsync.hooks.policy`).
Reading (``cat``, ``grep``, ``ls``, ``git``…) and deleting are left alone.

This is a first, fast filter, not the guarantee: the shell outruns any reading
of its text (escapes, expansion, programs whose writes it does not know, links
that never spell ``team``). What it lets through is checked on disk after the
call (:mod:`teamsync.hooks.verify`). Commands that never name ``team``,
``memory`` or the allowlist cost one substring check here.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # typing's, without importing typing on the hook path

if TYPE_CHECKING:
    from teamsync.hooks.places import Places

_HINTS = ("team", "memory", "allowlist", ".teamsync")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "|&", ";;", "(", ")"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_READERS = frozenset(
    {
        "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ls", "wc",
        "stat", "file", "diff", "cmp", "git", "echo", "printf", "md5sum", "sha1sum",
        "sha256sum", "realpath", "readlink", "test", "[", "du", "tree", "jq", "rm", "rmdir",
        "basename", "dirname", "cd", "pwd", "true", "false", "sort", "uniq", "cut", "tr",
        "column", "nl", "od", "xxd", "hexdump", "strings", "teamsync", "mkdir", "find",
    }
)  # fmt: skip
_UNSEEN = (
    "teamsync cannot see what this command would write into team memory; "
    "write memory files with the Write or Edit tool, which checks the content"
)
_PATHISH = re.compile(r"[^\s'\"(),;=`]+")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\2")


class _Write:
    """One write the command's text shows (a plain class: no dataclass to build on the
    hook path)."""

    __slots__ = ("append", "content", "target")

    def __init__(self, target: str, content: str | None, append: bool = False) -> None:
        self.target = target
        self.content = content  # None: the guard cannot see it
        self.append = append


def _mentions_memory(command: str, base: str) -> bool:
    lowered = command.lower()
    return any(h in lowered for h in _HINTS) or "memory" in base.lower()


def _heredocs(command: str) -> tuple[str, list[tuple[str, bool]]]:
    """The command with each heredoc body replaced by a marker word, and the bodies."""
    bodies: list[tuple[str, bool]] = []
    out: list[str] = []
    lines = command.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        pending = list(_HEREDOC.finditer(line))
        for n, match in enumerate(pending):
            line = line.replace(match.group(0), f"<< __TEAMSYNC_HEREDOC_{len(bodies) + n}__", 1)
        out.append(line)
        i += 1
        for match in pending:
            strip, quoted, delim = match.group(1) == "-", bool(match.group(2)), match.group(3)
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip else lines[i]) != delim:
                body.append(lines[i].lstrip("\t") if strip else lines[i])
                i += 1
            i += 1  # the delimiter line
            text = "\n".join(body) + "\n"
            bodies.append((text, quoted or ("$" not in text and "`" not in text)))
    return "\n".join(out), bodies


def _words(command: str) -> list[str]:
    import shlex  # only for a command that names team memory

    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace = " \t"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _commands(words: list[str]) -> list[list[str]]:
    """Simple commands with their separators kept as one-word entries."""
    groups: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            groups.append([word])
            groups.append([])
        else:
            groups[-1].append(word)
    return [g for g in groups if g]


def _dynamic(word: str) -> bool:
    return "$" in word or "`" in word


def _output_of(words: list[str], bodies: list[tuple[str, bool]], cwd: str) -> str | None:
    """What a simple command prints, when its text says; None when it cannot be known."""
    args = [w for w in words if not w.startswith("__TEAMSYNC_HEREDOC_")]
    marker = next((w for w in words if w.startswith("__TEAMSYNC_HEREDOC_")), None)
    if marker is not None:
        text, static = bodies[int(marker.strip("_").rsplit("_", 1)[-1])]
        return text if static else None
    if not args or "<stdin>" in args or any(_dynamic(w) for w in args):
        return None
    name, rest = os.path.basename(args[0]), args[1:]
    if name == "echo":
        newline = "-n" not in rest
        return " ".join(w for w in rest if w not in ("-n", "-e", "-E")) + ("\n" if newline else "")
    if name == "printf":
        return " ".join(rest)
    if name == "cat" and rest and all(not w.startswith("-") for w in rest):
        return "".join(_read(os.path.join(cwd, w)) or "\0" for w in rest) or None
    return None


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(300_001)
    except OSError:
        return None
    return data.decode("utf-8", "surrogateescape")


def _strip_redirects(words: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The words without redirections, and the (operator, target) output redirects.

    ``2>&1`` stays a word (``>&`` is not a file redirect); input redirections and
    here-strings are dropped with their operand, so the command's output is unknown.
    """
    kept: list[str] = []
    redirects: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        word = words[i]
        operand = words[i + 1] if i + 1 < len(words) else ""
        if word in _REDIRECTS:
            if kept and kept[-1].isdigit():
                kept.pop()  # 2> file: still a file
            redirects.append((word, operand))
            i += 2
        elif word == "<<":
            kept.append(operand)  # the heredoc marker
            i += 2
        elif word in ("<", "<<<", "<>"):
            kept.append("<stdin>")
            i += 2
        else:
            kept.append(word)
            i += 1
    return [w for w in kept if w], redirects


def _writes(command: str, cwd: str, home: str) -> tuple[list[_Write], list[str], str | None]:
    """(writes, program-handed paths, problem) for ``command`` run in ``cwd``."""
    text, bodies = _heredocs(command)
    try:
        words = _words(text)
    except ValueError:
        return [], [], "the command cannot be parsed"
    writes: list[_Write] = []
    handed: list[str] = []
    piped: str | None = None
    previous_sep = ""
    for group in _commands(words):
        if len(group) == 1 and group[0] in _SEPARATORS:
            previous_sep = group[0]
            continue
        args, redirects = _strip_redirects(group)
        stdin = piped if previous_sep in ("|", "|&") else None
        output = _output_of(args, bodies, cwd)
        for op, target in redirects:
            writes.append(_Write(target, output, append=op.endswith(">>")))
        name = os.path.basename(args[0]) if args else ""
        rest = [w for w in args[1:] if not w.startswith("-")]
        if name == "cd" and rest and not _dynamic(rest[0]):
            cwd = os.path.join(cwd, os.path.expanduser(rest[0]) if rest[0] == "~" else rest[0])
        elif name == "tee":
            append = any(w in ("-a", "--append") for w in args[1:])
            writes.extend(_Write(t, stdin, append=append) for t in rest)
        elif name in ("cp", "mv", "install") and len(rest) >= 2:
            for source in rest[:-1]:
                content = None if _dynamic(source) else _read(os.path.join(cwd, source))
                writes.append(_Write(_into(rest[-1], source, cwd), content))
        elif name == "touch":
            writes.extend(_Write(t, _read(os.path.join(cwd, t)) or "", append=False) for t in rest)
        elif name and name not in _READERS:
            handed.extend(args[1:])
            for word in args[1:]:  # a script fed on stdin (python3 - <<EOF … EOF)
                if word.startswith("__TEAMSYNC_HEREDOC_"):
                    handed.extend(bodies[int(word.strip("_").rsplit("_", 1)[-1])][0].split())
        piped = output if not redirects else None
    resolved = [_Write(_path(w.target, cwd, home), w.content, w.append) for w in writes if w.target]
    operands = [
        w.split("=", 1)[1] if "=" in w else ("" if w.startswith("-") else w) for w in handed
    ]
    operands += [p for w in handed for p in _PATHISH.findall(w) if p != w]  # open('team/x.md')
    return resolved, [_path(w, cwd, home) for w in operands if w], None


def _into(dest: str, source: str, cwd: str) -> str:
    full = os.path.join(cwd, dest)
    return os.path.join(dest, os.path.basename(source)) if os.path.isdir(full) else dest


def _path(word: str, cwd: str, home: str) -> str:
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    return word if os.path.isabs(word) else os.path.join(cwd, word)


_QUOTING = re.compile(r"""['"\\]""")


def _runs_allow(command: str) -> bool:
    """Whether ``command`` may run ``teamsync allow``, however it is quoted or split."""
    plain = _QUOTING.sub("", command)
    return bool(re.search(r"\bteamsync\b[^;&|\n]*\ballow\b", plain))


HOOKS_PATH_REASON = (
    "teamsync refused this command: it changes core.hooksPath, where git looks for the "
    "hooks teamsync installed; that setting is kept by people, not written by tools."
)
_READS_CONFIG = re.compile(r"--get\b|--get-|--list\b|\s-l\b|--show-")


def _sets_hooks_path(command: str) -> bool:
    """Whether ``command`` may change ``core.hooksPath``: it names the key and git's
    configuration (``git config``, a ``.git/config`` file); a read of it passes, and so
    does a mere mention (``grep -rn hooksPath docs``)."""
    plain = _QUOTING.sub("", command).lower()
    if "hookspath" not in plain or "config" not in plain:
        return False
    return _READS_CONFIG.search(plain) is None


def judge_bash(places: Places, command: str) -> str | None:
    """The deny reason for a Bash ``command`` that writes into team memory, else None.

    A first, fast filter on the command's text: what it misses, the check after
    the call (:mod:`teamsync.hooks.verify`) finds on disk.
    """
    if _sets_hooks_path(command):
        return HOOKS_PATH_REASON
    if not _mentions_memory(command, places.cwd):
        return None
    from teamsync.hooks.guard import ALLOWLIST_REASON, check_content, locate
    from teamsync.hooks.policy import guarded_files, guarded_target, refusal

    if _runs_allow(command):
        return ALLOWLIST_REASON
    writes, handed, problem = _writes(command, places.cwd, places.home)
    if problem is not None:
        return f"teamsync refused this command: {problem}, and it may write into team memory."
    guarded = guarded_files(places)
    for write in writes:
        if any(c in write.target for c in "$`*?[") or write.target.startswith("~"):
            return f"teamsync refused this command: {_UNSEEN}."
        item = guarded_target(write.target, guarded)
        if item is not None:
            return refusal(item)
        target = locate(write.target, places)
        if target is None:
            continue
        if write.content is None:
            return f"teamsync refused this command: {_UNSEEN}."
        if target.problem is not None:
            from teamsync.security.names import redact_name

            return (
                f"teamsync refused this command's write to team memory "
                f"`{redact_name(target.key)}`: {target.problem}."
            )
        content = write.content
        if write.append:
            content = (_read(os.path.join(str(target.team), target.key)) or "") + content
        reason = check_content(target, content, places)
        if reason is not None:
            return reason
    for word in handed:
        if guarded_target(word, guarded) is not None or locate(word, places) is not None:
            return f"teamsync refused this command: {_UNSEEN}."
    return None


__all__ = ["judge_bash"]
