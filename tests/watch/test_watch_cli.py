"""`local2 watch` as a person runs it, in real processes over the real watch store: bad input
refused with an example and nothing kept, an Apprise URL's secret in no output, pause,
resume, remove, and `run-due` with nothing due opening no model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import local2

SECRET = "hunter2-s3cret-token"
HOOK = f"json://alice:{SECRET}@127.0.0.1:9/hook"


def environment(tmp_path: Path) -> dict[str, str]:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "memory.yaml").write_text("embedder: lexical\nenabled: false\n")
    (conf / "watch.yaml").write_text("minimum_interval_s: 3600\n")
    return {"LOCAL2_HOME": str(tmp_path / "home"), "LOCAL2_CONFIG": str(conf), "COLUMNS": "200"}


def test_bad_input_is_refused_with_an_example_and_nothing_is_kept(tmp_path: Path) -> None:
    env = environment(tmp_path)
    cases = [
        (["--every", "every 10 minutes"], "at most every 1 hour"),
        (["--every", "61 7 * * *"], "malformed"),
        (["--every", "every day at 07:00", "--tz", "Mars/Olympus"], "Unknown time zone"),
        (["--every", "every day at 07:00", "--notify", "nosuch://x"], "unknown scheme"),
    ]
    for extra, said in cases:
        refused = local2("watch", "add", "Kestrel plant output", *extra, env=env)
        assert refused.returncode == 2, (extra, refused.stdout, refused.stderr)
        assert said in refused.stderr, refused.stderr
        assert "e.g." in refused.stderr or "such as" in refused.stderr, refused.stderr
    listed = local2("watch", "list", "--json", env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


def test_add_list_show_pause_resume_remove_with_the_secret_never_shown(tmp_path: Path) -> None:
    env = environment(tmp_path)
    added = local2(
        "watch", "add", "Kestrel plant output", "--every", "every Monday 07:00",
        "--tz", "Europe/Berlin", "--notify", HOOK, "--json", env=env,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    watch = json.loads(added.stdout)
    assert watch["targets"][0].startswith("json://alice:****@127.0.0.1:9/hook")
    wid = watch["watch_id"]
    outputs = [added]
    for args in (["list"], ["list", "--json"], ["show", wid], ["show", wid, "--json"]):
        shown = local2("watch", *args, env=env)
        assert shown.returncode == 0 and wid in shown.stdout, shown.stderr
        outputs.append(shown)
    paused = local2("watch", "pause", wid, env=env)
    after_pause = json.loads(local2("watch", "show", wid, "--json", env=env).stdout)["watch"]
    assert after_pause["paused"] and after_pause["next_due"] is None
    resumed = local2("watch", "resume", wid, env=env)
    after = json.loads(local2("watch", "show", wid, "--json", env=env).stdout)["watch"]
    assert not after["paused"] and after["next_due"] == watch["next_due"]  # the same Monday
    nothing = local2("watch", "run-due", env=env)
    assert nothing.returncode == 0 and "Nothing was due." in nothing.stderr
    unknown = local2("watch", "show", "w-000000000000", env=env)
    assert unknown.returncode == 3 and "local2 watch list" in unknown.stderr
    removed = local2("watch", "remove", wid, env=env)
    assert removed.returncode == 0
    assert json.loads(local2("watch", "list", "--json", env=env).stdout) == []
    for done in [*outputs, paused, resumed, nothing, removed]:
        assert SECRET not in done.stdout + done.stderr


def test_a_watch_keeps_a_scope_of_its_own_checked_as_research_checks_it(tmp_path: Path) -> None:
    env = environment(tmp_path)
    base = ["watch", "add", "EU AI Act guidance", "--every", "every Monday 07:00"]
    refused = local2(*base, "--since", "yesterday-ish", env=env)
    assert refused.returncode == 2 and "--since 'yesterday-ish' is not a date" in refused.stderr
    both = local2(*base, "--domains", "europa.eu", "--exclude-domains", "europa.eu", env=env)
    assert both.returncode == 2 and "both in --domains and in --exclude-domains" in both.stderr
    assert json.loads(local2("watch", "list", "--json", env=env).stdout) == []
    added = local2(
        *base, "--since", "past year", "--domains", "europa.eu,https://www.Nature.com/x",
        "--json", env=env,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    scope = json.loads(added.stdout)["options"]["scope"]
    assert scope == {"since": "past year", "domains": ["europa.eu", "nature.com"]}
