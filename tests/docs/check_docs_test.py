#!/usr/bin/env python3
"""scripts/check-docs finds what it promises to, on a small tree of pages written here."""

import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "check-docs")

PAGES = {
    "README.md": "# Top\n[index](docs/README.md), [guide](docs/guide.md#a-b_c-d)\n"
                 "[gone](docs/gone.md) [bad anchor](docs/guide.md#nope)\n"
                 "`[in code](docs/none.md)` and [web](https://example.com/x.md)\n"
                 "```\n[in a fence](docs/none.md)\n```\n",
    "docs/README.md": "# Index\n- [guide](guide.md)\n- [again, second heading](guide.md#twice-1)\n"
                      "## Contributing\n- [dev](dev.md)\n",
    "docs/dev.md": "# Dev\nFixed in a083f43 (`cli_itest`, tests/cli).\n",
    "docs/guide.md": "# Guide\n## A `b_c` *d*\n## Twice\n## Twice\n<a id=\"kept\"></a>\n"
                     "[self](#kept) [ref]\n\n[ref]: ../README.md#top\n"
                     "Since 4ff3644, `FooTest.Bar` in tests/foo/bar_test.cc and `local_itest`;"
                     " not 20220623, 0.4.7, deadbeef or application_1_0001.\n",
    "docs/orphan.md": "# Orphan\n[up](../README.md#missing)\n",
}


def main():
    with tempfile.TemporaryDirectory() as root:
        for name, text in PAGES.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        r = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    got = [l for l in r.stdout.splitlines() if not l.endswith("problem(s)")]
    want = [
        "check-docs: README.md:3: docs/gone.md: no such file",
        "check-docs: README.md:3: docs/guide.md#nope: no heading with anchor #nope in docs/guide.md",
        "check-docs: docs/orphan.md:2: ../README.md#missing: no heading with anchor #missing in"
        " README.md",
    ] + [f"check-docs: docs/guide.md:9: names {name}, a commit or test: user pages go without them"
         " (move it to docs/hacking.md)"
         for name in ("4ff3644", "FooTest", "tests/foo/bar_test.cc", "local_itest")] + [
        "check-docs: docs/README.md: does not link docs/orphan.md (every page under docs/ is listed"
        " there)",
    ]
    if r.returncode != 1 or got != want:
        print(f"exit {r.returncode}, output:\n{r.stdout}{r.stderr}\nwanted:\n" + "\n".join(want))
        return 1
    print("check-docs: found exactly the broken links, anchors, the unlisted page and the commit"
          " and test names in a user page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
