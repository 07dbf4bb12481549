"""Properties of the decision module (:mod:`teamsync.sync.decide`), on plain data only.

Random bases, local trees and remote listings over a few names (case twins and a
name that another needs as a folder included) and a few checksums; refused names,
unreadable folders, gate verdicts and every mode.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from teamsync.sync import decide as d

KEYS = ("a.md", "A.md", "b.md", "n.md", "n.md/x.md", "d/c.md", "d/e.md", "MEMORY.md")
SUMS = ("s1", "s2", "s3")
MODES = ("sync", "pull", "push", "status")

sides = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(SUMS), max_size=len(KEYS))
reasons = st.dictionaries(st.sampled_from(KEYS), st.just("bad"), max_size=2)


@st.composite
def views(draw: st.DrawFn) -> d.View:
    base, local, remote = draw(sides), draw(sides), draw(sides)
    return d.View(
        base=base,
        local=local,
        remote=remote,
        remote_refused=draw(reasons),
        local_refused=draw(reasons),
        unknown=draw(st.sets(st.sampled_from(("d", "n.md")), max_size=1)),
        hold=draw(reasons),
        gate_refused=draw(st.dictionaries(st.sampled_from(KEYS), st.just("a secret"))),
        mode=draw(st.sampled_from(MODES)),
    )


FAST = settings(max_examples=150, deadline=None)


@FAST
@given(views())
def test_every_key_appears_once_with_a_known_reason(view: d.View) -> None:
    plan = d.decide(view)
    keys = plan.keys()
    assert len(keys) == len(set(keys))
    every = view.base.keys() | view.local.keys() | view.remote.keys()
    assert set(keys) == every | view.remote_refused.keys() | view.local_refused.keys()
    for key in keys:
        entry = plan.get(key)
        assert entry is not None and entry.action in d.ACTIONS
        assert entry.code in d.REASONS and entry.why


@FAST
@given(views())
def test_no_local_edit_is_deleted_or_written_over(view: d.View) -> None:
    for e in d.decide(view).entries:
        b = view.base.get(e.key)
        if e.action == d.DELETE_HERE:  # only a file unchanged since the base
            assert b is not None and view.local.get(e.key) == b
        if e.action == d.WRITE_HERE:  # nothing of this side's own is replaced
            assert view.local.get(e.key) in (b, None)
        if e.action == d.DELETE_REMOTE:
            assert b is not None and view.remote.get(e.key) == b
        if e.action == d.PUSH:
            assert view.remote.get(e.key) in (b, None)


@FAST
@given(views())
def test_a_first_sync_deletes_nothing(view: d.View) -> None:
    first = d.View(view.base.__class__(), view.local, view.remote, mode=view.mode)
    assert not {e.action for e in d.decide(first).entries} & {d.DELETE_HERE, d.DELETE_REMOTE}


@FAST
@given(views())
def test_modes_refused_names_and_unknown_folders(view: d.View) -> None:
    plan = d.decide(view)
    acts = {e.key: e.action for e in plan.entries}
    if view.mode == "pull":
        assert not set(acts.values()) & {d.PUSH, d.DELETE_REMOTE}
    if view.mode == "push":
        assert not set(acts.values()) & {d.WRITE_HERE, d.DELETE_HERE, d.MERGE}
    for key, action in acts.items():
        if key in view.remote_refused or key in view.local_refused:
            assert action == d.REFUSE
        elif key in view.hold:
            assert action == d.HOLD_BACK
        elif any(key == u or key.startswith(u + "/") for u in view.unknown):
            assert action == d.NOTHING
    for e in plan.entries:  # a merge whose local text the gate refused is held, not fetched
        if e.key in view.gate_refused and e.code in ("changed-both", "created-both"):
            raise AssertionError(e)


@FAST
@given(views())
def test_the_plan_states_its_durable_order(view: d.View) -> None:
    phases = [-1 if e.phase is None else e.phase for e in d.decide(view).entries]
    assert phases == sorted(phases)
    steps = d.decide(view).steps(d.ACTIONS)
    assert [s.key for s in steps] == sorted(s.key for s in steps)


def _run(view: d.View, plan: d.Plan) -> d.View:
    """The three maps after ``plan`` ran as decided (a merge writes a new local text)."""
    base, local, remote = dict(view.base), dict(view.local), dict(view.remote)
    for e in plan.entries:
        if e.action == d.WRITE_HERE:
            local[e.key] = base[e.key] = remote[e.key]
        elif e.action == d.DELETE_HERE:
            local.pop(e.key), base.pop(e.key, None)
        elif e.action in (d.PUSH, d.RECORD):
            _put(base, e.key, local.get(e.key))
            if e.action == d.PUSH:
                remote[e.key] = local[e.key]
        elif e.action == d.DELETE_REMOTE:
            remote.pop(e.key), base.pop(e.key, None)
        elif e.action == d.MERGE:
            base[e.key], local[e.key] = remote[e.key], f"merged:{e.local}+{e.remote}"
    kept = {f: getattr(view, f) for f in ("remote_refused", "local_refused", "unknown", "hold")}
    return d.View(base, local, remote, mode=view.mode, **kept)


def _put(m: dict[str, str], key: str, value: str | None) -> None:
    if value is None:
        m.pop(key, None)
    else:
        m[key] = value


def _active(plan: d.Plan) -> dict[str, str]:
    passive = (d.NOTHING, d.REFUSE, d.HOLD_BACK)
    return {e.key: e.action for e in plan.entries if e.action not in passive}


@FAST
@given(views())
def test_a_sync_settles_and_running_its_plan_again_does_nothing(view: d.View) -> None:
    view = d.View(
        view.base, view.local, view.remote, view.remote_refused, view.local_refused, mode="sync"
    )
    after = _run(view, d.decide(view))
    again = _run(after, d.decide(after))  # the merges written here are pushed
    assert _active(d.decide(again)) == {}
    assert _run(again, d.decide(again)) == again


@FAST
@given(
    views(),
    st.dictionaries(
        st.sampled_from((*KEYS, "a.conflict-20260101T000000Z-bob.md")),
        st.builds(
            d.Outcome,
            st.sampled_from(d.ACTIONS),
            st.sampled_from(sorted(d.REASONS)),
            st.just("why"),
        ),
    ),
)
def test_settling_outcomes_twice_is_settling_once(
    view: d.View, outcomes: Mapping[str, d.Outcome]
) -> None:
    once = d.settle(d.decide(view), outcomes)
    assert d.settle(once, outcomes) == once
    for key, o in outcomes.items():
        entry = once.get(key)
        assert entry is not None and (entry.action, entry.code) == (o.action, o.code)
    assert len(once.keys()) == len(set(once.keys()))
