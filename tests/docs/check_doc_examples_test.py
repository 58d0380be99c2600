#!/usr/bin/env python3
"""scripts/check-doc-examples runs what it promises to, on pages and fake programs written here.

The fake ytf-submit and ytf log their arguments, so the test sees which commands ran and with
what; the fake ytf-submit refuses `--bad` as the real one refuses a bad option. A fake libtony
package logs which backend a python block got.
"""

import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                     "check-doc-examples")

FAKE = """#!/bin/bash
echo "$(basename "$0") $*" >> "$FAKE_LOG"
for a; do [[ $a == --bad ]] && { echo "$(basename "$0"): --bad: no such option" >&2; exit 2; }; done
for a; do [[ $a == --show_site ]] && { echo "site file: conf/tony-site.yaml"; exit 0; }; done
echo "name: fake"
"""

A = """# A
```sh
kinit alice   # not run
ytf-submit -r worker:2 'python3 train.py'   # a comment
app=$(ytf-submit --detach -r w:1 true) || exit 1
ytf status "$app"
ytf logs --help
```

<!-- not-tested: needs a cluster -->
```sh
ytf-submit --bad
```

```sh
ytf-submit --bad \\
  -r x:1 true
```

<!-- not-tested: -->
```sh
ytf-submit -r x:1 true
```

<!-- not-tested: nothing to run anyway -->
```sh
kinit alice
```

```
ytf-submit --yarn -r x:1 true
```

```python
def f(:
```

```yaml
something: else
```

```yaml
jobs:
  w: {instances: 1}
```

```console
$ ytf-submit --show_site
site file: /etc/hadoop/conf/tony-site.yaml
```

Inline: `ytf-submit -r w:3 'python3 x.py'`, not `ytf-submit --spec job.yaml`.

```sh
ytf usage --local --by job   # offline: runs
ytf usage --by job           # the cluster's: does not
```

```python
import libtony
libtony.Submitter.yarn(conf_dir="/etc/hadoop/conf").submit("spec")
```

```python
raise SystemExit("boom")
```

<!-- not-tested: needs a cluster -->
```python
import libtony
libtony.Submitter.yarn().submit("not run")
```
"""

# The package's __init__; _tony*.so need only exist.
FAKE_LIBTONY = """import os
class Submitter:
    @staticmethod
    def yarn(*args, **kwargs):
        raise RuntimeError("the real yarn() ran")
    @staticmethod
    def local():
        return Submitter()
    def submit(self, spec):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(f"local submit {spec} in {os.environ['TMPDIR'] == os.getcwd()}\\n")
"""

README = """# Top
## Benchmarks
From [the table](bench/x.md) (2026-01-02, a cluster):

| what | figure |
|---|---|
| a (1 of 2) | 1.10 s, 25 MB |
| b | 9.99 s |

Not committed:

| what | figure | when |
|---|---|---|
| c | 3 s | `bench/run`, 2026-01-03 |
| d | 4 s | `bench/run` |
"""

BENCH = "# x\n## Old (2025-12-01)\n| 9.99 |\n## Figures (2026-01-02)\n| 1.104 s | 25 MB |\n"


def main():
    with tempfile.TemporaryDirectory() as root:
        files = {"README.md": README, "bench/x.md": BENCH, "docs/README.md": "# Index\n",
                 "docs/a.md": A, "bin/ytf-submit": FAKE, "bin/ytf": FAKE,
                 "python/libtony/__init__.py": FAKE_LIBTONY, "python/libtony/_tony.so": ""}
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        for name in ("bin/ytf-submit", "bin/ytf"):
            os.chmod(os.path.join(root, name), 0o755)
        log = os.path.join(root, "log")
        r = subprocess.run([sys.executable, CHECK, "--bin", os.path.join(root, "bin"), root],
                           capture_output=True, text=True, env={**os.environ, "FAKE_LOG": log})
        with open(log, encoding="utf-8") as f:
            ran = f.read().splitlines()
    got = r.stdout.splitlines()
    fix = " (fix the example, or put <!-- not-tested: why --> before the block)"
    want = [
        "check-doc-examples: docs/a.md:15: `ytf-submit --dry-run --bad -r x:1 true` exited 2:"
        " ytf-submit: --bad: no such option" + fix,
        "check-doc-examples: docs/a.md:21: <!-- not-tested: --> gives no reason",
        "check-doc-examples: docs/a.md:26: a not-tested marker on a block that would not run:"
        " remove it",
        "check-doc-examples: docs/a.md:30: a ytf-submit command in a block without a language:"
        " say ```sh (it then runs) or ```text",
        "check-doc-examples: docs/a.md:34: python does not compile: invalid syntax (block line 1)",
        "check-doc-examples: docs/a.md:38: a yaml block that is neither a job spec (jobs:) nor a"
        " site file (limits:, templates:): put <!-- not-tested: why --> before it",
        "check-doc-examples: docs/a.md:64: python (local backend) exited 1: boom" + fix,
        "check-doc-examples: README.md:8: 9.99 is not among the figures of bench/x.md"
        " (2026-01-02)",
        "check-doc-examples: README.md:15: a benchmark figure without the date it was measured"
        " (give it in the last column, or cite a committed bench/ file and its date above the"
        " table)",
        "check-doc-examples: 9 problem(s); 3 shell blocks run, 5 commands run, 1 yaml checked,"
        " 3 python compiled, 1 python run, 2 opted out, 1 inline commands run,"
        " 0 example specs checked",
    ]
    want_ran = [
        "ytf-submit --dry-run -r worker:2 python3 train.py",
        "ytf-submit --dry-run --detach -r w:1 true",
        "ytf logs --help",
        "ytf-submit --dry-run --bad -r x:1 true",
        "ytf-submit --dry-run --spec JOB true",
        "ytf-submit --dry-run --spec AGAIN",
        "ytf-submit --show_site",
        "ytf usage --local --by job",
        "local submit spec in True",
        "ytf-submit --dry-run -r w:3 python3 x.py",
    ]
    ran = [" ".join("JOB" if w.endswith("/job.yaml") else "AGAIN" if w == "again.yaml"
                    else w for w in line.split()) for line in ran]
    if r.returncode != 1 or got != want or ran != want_ran:
        print(f"exit {r.returncode}, output:\n{r.stdout}{r.stderr}\nwanted:\n" + "\n".join(want))
        print("ran:\n" + "\n".join(ran) + "\nwanted to run:\n" + "\n".join(want_ran))
        return 1
    print("check-doc-examples: ran exactly the offline commands, with --dry-run where they"
          " would submit, python against the local backend, and found every broken example,"
          " marker and figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
