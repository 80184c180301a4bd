"""Which checkout a folder is, read from its path alone: for folders this machine cannot look at.

``kenning.project.find_root`` follows a worktree's ``.git`` file to its repository, but the folders
of an imported transcript (another machine, a deleted worktree) and a Windows path are not on this
disk. Their path still says a lot, because tools that make worktrees put them in known places:

* inside the repository, under a tool's folder or a hidden one: ``<repo>/.claude/worktrees/<name>``
  (Claude Code), ``<repo>/.letta/worktrees/<name>``, ``<repo>/.worktrees/<name>``: the main checkout is
  ``<repo>``, and the path says where it is;
* next to it: ``<repo>.worktrees/<name>``, ``<repo>-worktrees/<name>`` (that folder itself): the main
  checkout is ``<repo>``;
* in a store of worktrees elsewhere: ``~/.codex/worktrees/<id>/<repo>``, ``~/.grok/worktrees/<repo>/<name>``,
  ``~/conductor/workspaces/<repo>/<name>``, ``<anything>/wt/<repo>/<name>``, or any
  ``<anything>/worktrees/<name>/<repo>``: a checkout of
  a repository named by one of the folders after ``worktrees`` (a generated id like ``4f2a`` never is;
  in ``<store>/<repo>/<name>/<repo>``, the clone in a folder of its own, the name said twice is);
  where its main checkout lives is not in the path. Such a checkout is a *worktree*: ``names`` lists
  the repository names it may carry, most likely first, and the import joins it to the one known
  checkout of such a name (kenning/store/checkouts.py). A tool's hidden folder directly in a home
  folder (``~/.<tool>/worktrees``), or one of :data:`STORE_TOOLS` anywhere, is such a store; inside a
  repository it is that repository's.

Anything else is a checkout of its own, named by its last folder. Standard library only, no
imports (the hook uses it for Windows paths).
"""

from __future__ import annotations

from kenning import winpath

# Tools' folders known to hold worktrees in a store of their own (in the home folder), whatever the
# path above them: ~/.codex/worktrees/<id>/<repo>, ~/.cursor/worktrees/<repo>/<id>, ~/.grok/worktrees/<repo>/<name>.
# Another tool's folder counts as a store when it sits in a home folder, else as the repository's own.
STORE_TOOLS = (".codex", ".cursor", ".grok")
# Suffixes of a folder of worktrees kept next to the main checkout: <repo>.worktrees/<name>.
SIBLING_SUFFIXES = (".worktrees", "-worktrees", "_worktrees")
HOMES = ("users", "home")  # /Users/<me>, /home/<me>, C:\Users\<me>


class Layout:
    """What a path says about its checkout."""

    __slots__ = ("name", "names", "root", "rule", "worktree")

    def __init__(self, name: str, root: str, *, worktree: bool = False, names: tuple[str, ...] = (),
                 rule: str = "") -> None:
        self.name = name  # the repository's folder name, as shown
        self.root = root  # the checkout's folder (the main checkout's when the path says where it is)
        self.worktree = worktree  # a worktree whose main checkout the path does not locate
        self.names = names or (name,)  # repository names it may carry, most likely first
        self.rule = rule  # the convention that matched, for explanations ('' for a plain folder)

    def __repr__(self) -> str:
        return (f"Layout(name={self.name!r}, root={self.root!r}, worktree={self.worktree!r}, "
                f"names={self.names!r}, rule={self.rule!r})")


def layout(path: str) -> Layout:
    """The checkout ``path`` (POSIX or Windows, absolute) belongs to, by the conventions above."""
    p = _Path(path)
    parts, low = p.parts, [x.lower() for x in p.parts]
    for i in range(1, len(parts) - 1):
        if low[i].startswith(".") and low[i + 1] == "worktrees" and i + 2 < len(parts) \
                and low[i] not in STORE_TOOLS and not _home_level(low, i):
            # <repo>/.<tool>/worktrees/<name>: the tool keeps worktrees inside the repository.
            return Layout(parts[i - 1], p.prefix(i), rule=f"<repo>/{parts[i]}/worktrees/<name>")
        if low[i] == ".worktrees":
            return Layout(parts[i - 1], p.prefix(i), rule="<repo>/.worktrees/<name>")
    # <repo>.worktrees/<name> itself only: below it, a repository called git-worktrees has folders of its own.
    i = len(parts) - 2
    for suffix in SIBLING_SUFFIXES if i >= 0 else ():
        if low[i].endswith(suffix) and len(low[i]) > len(suffix):
            repo = parts[i][:-len(suffix)]
            return Layout(repo, p.prefix(i, repo), rule=f"<repo>{suffix}/<name>")
    for i in range(len(parts) - 2, -1, -1):
        store = _worktree_store(low, i)
        if store:
            return _in_store(p, low, i, store)
    return Layout(parts[-1] if parts else p.anchor, p.prefix(len(parts)))


class _Path:
    """A path cut into its anchor and folder names, rebuilt in its own spelling."""

    __slots__ = ("anchor", "parts", "windows")

    def __init__(self, path: str) -> None:
        self.windows = winpath.is_windows(path)
        if self.windows:
            self.anchor, self.parts = winpath.split(path)
        else:
            self.anchor, self.parts = "/", winpath.folded(path.split("/"))

    def prefix(self, n: int, *more: str) -> str:
        """The path of the first ``n`` folders (and ``more`` below them)."""
        names = [*self.parts[:n], *more]
        return winpath.build(self.anchor, names) if self.windows else "/" + "/".join(names)




def _is_home(low: list[str], i: int) -> bool:
    """``low[i]`` is a home folder: ``/Users/<me>``, ``/home/<me>``, ``C:\\Users\\<me>``, ``/root``."""
    return (i == 1 and low[0] in HOMES) or (i == 0 and low[0] == "root")


def _home_level(low: list[str], i: int) -> bool:
    """``low[i]`` sits directly in a home folder (``~/.codex``): a tool's store, not a repository's."""
    return _is_home(low, i - 1)


def _worktree_store(low: list[str], i: int) -> str:
    """The kind of worktree store whose folder is ``low[i]`` ('' when it is none)."""
    if low[i] == "worktrees":
        return "worktrees"
    if low[i] == "wt" and i > 0:
        return "wt"  # a folder of worktrees by its short name: ~/Projects/wt/<repo>/<name>, ~/Projects/wt/<name>
    if low[i] == "workspaces" and i > 0 and low[i - 1] == "conductor":
        return "conductor"  # Conductor: ~/conductor/workspaces/<repo>/<name>
    return ""


def _in_store(p: _Path, low: list[str], i: int, store: str) -> Layout:
    """A checkout in a store of worktrees at folder ``i``: ``<store>/<a>/<b>`` or ``<store>/<a>``."""
    parts = p.parts
    after = parts[i + 1:i + 3]
    # The store's own parent may be the repository (<repo>/worktrees/<name>), unless it is a
    # tool's folder or a home.
    parent = ""
    if i > 0 and not low[i - 1].startswith(".") and not _is_home(low, i - 1) and low[i - 1] not in HOMES:
        parent = parts[i - 1]
    if len(after) == 1:
        return Layout(after[0], p.prefix(i + 2), worktree=True, names=_unique((after[0], parent)),
                      rule=f"{parts[i]}/<name>")
    a, b = after
    if len(parts) > i + 3 and low[i + 3] in (low[i + 1], low[i + 2]):
        # <store>/<repo>/<name>/<repo>: a folder per worktree, holding a clone named like the repository
        # (~/Code/worktrees/flutter-docker-image/quiet-minnow/flutter-docker-image). The name said twice is it.
        other = b if low[i + 3] == low[i + 1] else a
        return Layout(parts[i + 3], p.prefix(i + 4), worktree=True, names=_unique((parts[i + 3], other, parent)),
                      rule=f"{parts[i]}/<repo>/<name>/<repo>")
    if store in ("conductor", "wt") or (_id_like(b) and not _id_like(a)):
        first, second, rule = a, b, f"{parts[i]}/<repo>/<name>"
    else:
        first, second, rule = b, a, f"{parts[i]}/<name>/<repo>"
    return Layout(first, p.prefix(i + 3), worktree=True, names=_unique((first, second, parent)), rule=rule)


def _id_like(s: str) -> bool:
    """A generated worktree name (``4f2a``, ``019e0a1b``, ``1234``), not a repository's."""
    return len(s) >= 3 and any(c.isdigit() for c in s) and all(c in "0123456789abcdefABCDEF-_" for c in s)


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for n in names:
        if n and n.lower() not in (o.lower() for o in out):
            out.append(n)
    return tuple(out)
