#!/usr/bin/env python3
"""Checks THIRD_PARTY.md against what the built programs really link, and
fails on GPL or AGPL in a shipped program.

usage: check-licenses.py BUILD_DIR [--third-party THIRD_PARTY.md]
           [--dockerfile docker/Dockerfile] [--expect-gpl PROGRAM:PACKAGE]...
           [--ninja NINJA] [--write]

For each shipped program (PROGRAMS below) it finds:
  - the shared libraries it loads (ldd: NEEDED and their NEEDED), and the
    Debian package of each (dpkg's file lists);
  - the libraries compiled into it from headers only (CGAL is header-only:
    ldd cannot see it). Ninja's dependency log (`ninja -t deps`) names every
    header each object file included; build.ninja says which objects and
    static archives each program links. A header from a Debian package whose
    source package has no shared library in the program is such a library.
The image is the server, the CLI, wayfinder-load and wayfinder-probe plus
the packages the Dockerfile's last stage installs.

Each package must have a row in THIRD_PARTY.md's "Shipped programs" table
with its licence (an SPDX-style expression: AND, OR, WITH) and an x in the
column of each program that links it, and nothing else: a missing row, a
missing or extra x, or a licence whose identifiers do not appear in the
package's /usr/share/doc/<package>/copyright fails the check. --write
rewrites the marks from what was found and drops rows of packages no
longer linked (new packages get licence "?", which still fails until
filled in).

The policy, per program:
  - GPL or AGPL (any version, not LGPL) in every alternative of the
    licence expression fails, unless under an exception (WITH ..., e.g.
    libstdc++'s GCC Runtime Library Exception) or listed with --expect-gpl
    (a known GPL dependency being removed; the check then fails once it is
    gone, so that the list cannot go stale).
  - LGPL is allowed when the library is linked dynamically (a shared
    library found by ldd: it can be replaced by the user, LGPL's condition).
    An LGPL package that reaches a program through its headers only is
    printed for review (header material is allowed by LGPL-2.1 section 5 and
    LGPL-3 section 3; a library whose code is compiled in is not).
  - A package whose copyright file says GPL for "Files: *" while the table
    claims otherwise fails (the table must not hide it), unless reviewed in
    REVIEWED_FILES_STAR below with the reason.
"""

import argparse
import glob
import os
import re
import subprocess
import sys

# Program column -> its file in the build tree. libwayfinder_client is the
# client library as a studio links it: a program that links only
# Wayfinder::client (the client-consumer example, built in-tree too).
PROGRAMS = {
    "wayfinder-server": "server/wayfinder-server",
    "libwayfinder_client": "tests/product/client-consumer",
    "wayfinder": "client/wayfinder",
    "wayfinder-load": "client/wayfinder-load",
    "wayfinder-probe": "client/wayfinder-probe",
}
IMAGE_PROGRAMS = ["wayfinder-server", "wayfinder", "wayfinder-load", "wayfinder-probe"]
COLUMNS = list(PROGRAMS) + ["image"]
TABLE_TITLE = "## Shipped programs"

# Packages whose Debian copyright file gives "Files: *" a GPL licence that
# does not cover the library the programs load, each reviewed by hand: the
# table's licence is the library's. The check against "Files: *" is skipped
# for these only.
REVIEWED_FILES_STAR = {
    "libcom-err2": "e2fsprogs' NOTICE: lib/et (libcom_err) is under an MIT-style licence; "
                   "Debian lists the whole tree as GPL-2 for simplification",
    "libidn2-0": "Files: *.c *.h (the library) is LGPL-3+ or GPL-2+; GPL-3+ is the idn2 "
                 "tool and build files",
    "libkeyutils1": "Files: keyutils.* (the library) is LGPL-2+; GPL-2+ is the keyctl tool",
    "linux-libc-dev": "the kernel's user-space API headers: GPL-2 WITH Linux-syscall-note",
}


# ----------------------------------------------------------------- dpkg

class Dpkg:
    """Which package owns a file, and each package's source package."""

    def __init__(self):
        self.owner = {}
        for path in glob.glob("/var/lib/dpkg/info/*.list"):
            package = os.path.basename(path)[:-len(".list")].split(":")[0]
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    self.owner.setdefault(line.rstrip("\n"), package)
        self._source = {}

    def package_of(self, path):
        candidates = [path, os.path.realpath(path)]
        for p in list(candidates):  # merged /usr: /lib/x and /usr/lib/x
            if p.startswith("/usr/"):
                candidates.append(p[4:])
            else:
                candidates.append("/usr" + p)
        for p in candidates:
            if p in self.owner:
                return self.owner[p]
        return None

    def source_of(self, package):
        if package not in self._source:
            out = subprocess.run(["dpkg-query", "-W", "-f=${source:Package}", package],
                                 capture_output=True, text=True)
            self._source[package] = out.stdout.strip() or package
        return self._source[package]


# ------------------------------------------------------- what a program links

def shared_libraries(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\S+)\s+=>\s+(\S+)", line)
        if m and m.group(2) != "not":
            libs.append(m.group(2))
        elif re.match(r"^\s*(/\S+)\s+\(", line):
            libs.append(line.split()[0])
        elif "not found" in line:
            raise SystemExit(f"{binary}: {line.strip()}")
    return libs


def parse_build_ninja(build_dir):
    """output -> (explicit inputs, LINK_LIBRARIES) for link statements."""
    rules = {}
    with open(os.path.join(build_dir, "build.ninja"), encoding="utf-8") as f:
        text = f.read().replace("$\n", "")
    current = None
    for line in text.splitlines():
        m = re.match(r"^build (\S+): (CXX_\S*LINKER\S*) (.*)$", line)
        if m:
            output, inputs = m.group(1), m.group(3)
            explicit = inputs.split(" | ")[0].split(" || ")[0].split()
            current = output
            rules[output] = [explicit, []]
            continue
        if current and line.startswith("  LINK_LIBRARIES = "):
            rules[current][1] = line.split("=", 1)[1].split()
        elif not line.startswith("  "):
            current = None
    return rules


def objects_of(program_file, rules):
    """Every object file linked into program_file (its own, and those of the
    static archives it links, transitively)."""
    objects, seen = [], set()
    stack = [program_file]
    while stack:
        out = stack.pop()
        if out in seen or out not in rules:
            continue
        seen.add(out)
        explicit, link_libraries = rules[out]
        for item in explicit + link_libraries:
            if item.endswith(".o"):
                objects.append(item)
            elif item.endswith(".a") and not item.startswith("/"):
                stack.append(item)
    return objects


def header_deps(build_dir, ninja):
    """object -> headers it included, from ninja's dependency log."""
    out = subprocess.run([ninja, "-C", build_dir, "-t", "deps"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"ninja -t deps failed in {build_dir} (a Ninja build is required): "
                         f"{out.stderr.strip()}")
    deps, current = {}, None
    for line in out.stdout.splitlines():
        if line and not line.startswith(" "):
            current = line.split(":")[0]
            deps[current] = []
        elif line.strip() and current is not None:
            deps[current].append(line.strip())
    return deps


def program_packages(build_dir, name, rel, dpkg, rules, deps):
    """{package: 'shared' | 'headers'} for one program."""
    binary = os.path.join(build_dir, rel)
    if not os.path.exists(binary):
        raise SystemExit(f"{binary}: not built (build the target first)")
    found, problems = {}, []
    for lib in shared_libraries(binary):
        package = dpkg.package_of(lib)
        if package is None:
            problems.append(f"{name}: {lib} comes from no Debian package")
            continue
        found[package] = "shared"
    sources = {dpkg.source_of(p) for p in found}
    objects = objects_of(rel, rules)
    if not objects:
        problems.append(f"{name}: no object files found for {rel} in build.ninja")
    headers = set()
    for obj in objects:
        if obj not in deps:
            problems.append(f"{name}: {obj} is not in ninja's dependency log (rebuild it)")
            continue
        headers.update(h for h in deps[obj] if h.startswith("/"))
    header_packages = {}
    for h in headers:
        package = dpkg.package_of(h)
        if package is not None:
            header_packages[package] = h
    for package in sorted(header_packages):
        if dpkg.source_of(package) not in sources:
            found.setdefault(package, "headers")
    return found, problems


def dockerfile_packages(path):
    """Packages apt-get installs in the Dockerfile's last stage."""
    with open(path, encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    last = text.split("\nFROM ")[-1]
    packages = []
    for m in re.finditer(r"apt-get install ([^&\n]*)", last):
        packages += [w for w in m.group(1).split() if not w.startswith("-")]
    return packages


# -------------------------------------------------------------- licences

def alternatives(expression):
    return [a.strip(" ()") for a in re.split(r"\s+OR\s+", expression)]


def is_gpl_term(term):
    term = term.strip(" ()")
    if " WITH " in term:
        return False
    return re.match(r"^A?GPL", term) is not None


def is_lgpl_term(term):
    return term.strip(" ()").startswith("LGPL")


def strong_copyleft(expression):
    """True when every alternative of the expression requires GPL/AGPL."""
    return all(any(is_gpl_term(t) for t in re.split(r"\s+AND\s+", alt))
               for alt in alternatives(expression))


def lgpl_only(expression):
    """True when every alternative has an LGPL term (and none is GPL)."""
    return all(any(is_lgpl_term(t) for t in re.split(r"\s+AND\s+", alt))
               for alt in alternatives(expression))


def identifiers(expression):
    words = re.split(r"[\s()]+", expression)
    out, skip = [], False
    for w in words:
        if not w or w in ("AND", "OR"):
            continue
        if w == "WITH":
            skip = True
            continue
        if skip:
            skip = False
            continue
        out.append(w)
    return out


def copyright_text(package):
    path = f"/usr/share/doc/{package}/copyright"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def dep5_names(text):
    """The licence short names of a machine-readable (DEP-5) copyright file,
    lowercased, each alternative apart; None for a free-form file."""
    if not re.match(r"^Format:\s*\S+", text):
        return None
    names = set()
    for m in re.finditer(r"^License:[ \t]*(\S.*)$", text, re.M):
        for part in re.split(r"\s+(?:or|and|with)\s+|,", m.group(1).lower()):
            part = part.strip(" ()")
            if part:
                names.add("mit" if part == "expat" else part)
    return names


def identifier_in(ident, text):
    """A licence identifier (GPL-3+, Apache-2.0, BSL-1.0, ...) is named in a
    copyright file: in a DEP-5 file among its License: short names (as
    itself, or as a prefix such as BSD-3-Clause of BSD-3-Clause~Google);
    in a free-form file anywhere in the text, also without '+' / '.0'."""
    names = dep5_names(text)
    if names is not None:
        want = ident.lower()
        want = {"oldap-2.8": "openldap-2.8", "bsl-1.0": "bsl-1.0"}.get(want, want)
        short = want.replace("-clause", "")  # Debian's BSD-3-google and the like
        # A bare "Apache" short name (pcg-cpp's) counts when its text names
        # the version.
        apache_2 = want == "apache-2.0" and "apache license, version 2.0" in text.lower()
        return any(n == want or n.startswith(want) or n.startswith(want.rstrip("+")) or
                   n.startswith(short) or (want == "bsl-1.0" and n == "boost") or
                   (apache_2 and n == "apache")
                   for n in names)
    low = text.lower()
    base = ident.lower().rstrip("+").replace("-or-later", "").replace("-only", "")
    forms = {base, base.replace(".0", ""), base.replace("-", " "), base.replace("-", ""),
             base.replace("-", "v", 1)}
    aliases = {"bsl-1.0": ["boost software license"], "zlib": ["zlib"],
               "postgresql": ["postgresql"], "mit": ["mit", "expat"],
               "bsd-3-clause": ["bsd-3", "bsd 3", "bsd"], "bsd-2-clause": ["bsd-2", "bsd"],
               "apache-2.0": ["apache-2", "apache license"],
               "oldap-2.8": ["openldap-2.8"]}
    forms.update(aliases.get(base, []))
    return any(f in low for f in forms)


def files_star_license(text):
    """DEP-5: the License of the "Files: *" stanza, if any."""
    for stanza in re.split(r"\n\s*\n", text):
        if re.search(r"^Files:\s*\*\s*$", stanza, re.M):
            m = re.search(r"^License:\s*(.+)$", stanza, re.M)
            if m:
                return m.group(1).strip()
    return None


# ----------------------------------------------------------- THIRD_PARTY.md

def read_table(path):
    """(lines, start, end, rows): rows package -> {what, licence, marks}."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        title = lines.index(TABLE_TITLE)
    except ValueError:
        raise SystemExit(f"{path}: no '{TABLE_TITLE}' section")
    start = next(i for i in range(title, len(lines)) if lines[i].startswith("|"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    want = ["Debian package", "Library", "Licence"] + COLUMNS
    if header != want:
        raise SystemExit(f"{path}: table columns {header}, expected {want}")
    rows = {}
    for line in lines[start + 2:end]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        package = cells[0].strip("`")
        rows[package] = {"what": cells[1], "licence": cells[2],
                         "marks": {c for c, v in zip(COLUMNS, cells[3:]) if v == "x"}}
    return lines, start, end, rows


def format_table(rows):
    head = ["Debian package", "Library", "Licence"] + COLUMNS
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    order = sorted(rows, key=lambda p: (-len(rows[p]["marks"]), p))
    for p in order:
        r = rows[p]
        out.append("| " + " | ".join([f"`{p}`", r["what"], r["licence"]] +
                                     ["x" if c in r["marks"] else "" for c in COLUMNS]) + " |")
    return out


# ----------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--third-party", default=os.path.join(here, "THIRD_PARTY.md"))
    ap.add_argument("--dockerfile", default=os.path.join(here, "docker", "Dockerfile"))
    ap.add_argument("--expect-gpl", action="append", default=[], metavar="PROGRAM:PACKAGE",
                    help="a GPL dependency known to be in PROGRAM (and the image), "
                         "reported but not failed; fails once it is gone")
    ap.add_argument("--write", action="store_true", help="rewrite the table's marks")
    ap.add_argument("--ninja", default="ninja", help="the ninja program of the build")
    args = ap.parse_args()

    dpkg = Dpkg()
    rules = parse_build_ninja(args.build_dir)
    deps = header_deps(args.build_dir, args.ninja)
    problems = []
    links = {}  # package -> {column: 'shared' | 'headers' | 'installed'}
    for name, rel in PROGRAMS.items():
        found, probs = program_packages(args.build_dir, name, rel, dpkg, rules, deps)
        problems += probs
        for package, how in found.items():
            links.setdefault(package, {})[name] = how
            if name in IMAGE_PROGRAMS:
                links[package]["image"] = how
    for package in dockerfile_packages(args.dockerfile):
        links.setdefault(package, {}).setdefault("image", "installed")

    lines, start, end, rows = read_table(args.third_party)
    for package, cols in sorted(links.items()):
        row = rows.get(package)
        if row is None:
            problems.append(f"{package}: linked into {', '.join(sorted(cols))} but not in "
                            f"{os.path.basename(args.third_party)}")
            rows[package] = {"what": "?", "licence": "?", "marks": set(cols)}
            continue
        if row["marks"] != set(cols):
            missing = set(cols) - row["marks"]
            extra = row["marks"] - set(cols)
            if missing:
                problems.append(f"{package}: table lacks an x for {', '.join(sorted(missing))}")
            if extra:
                problems.append(f"{package}: table has an x for {', '.join(sorted(extra))}, "
                                "which does not link it")
            row["marks"] = set(cols)
    for package in sorted(set(rows) - set(links)):
        problems.append(f"{package}: in the table but linked into no shipped program")

    expected = {}
    for item in args.expect_gpl:
        program, _, package = item.partition(":")
        expected.setdefault(package, set()).add(program)
    gpl_seen = set()
    for package, cols in sorted(links.items()):
        licence = rows[package]["licence"]
        if licence == "?":
            continue
        text = copyright_text(package)
        if text is None:
            problems.append(f"{package}: no /usr/share/doc/{package}/copyright")
            continue
        for ident in identifiers(licence):
            if package in REVIEWED_FILES_STAR:
                break  # the table follows the review, not the file's names
            if not ident.startswith("LicenseRef") and not identifier_in(ident, text):
                problems.append(f"{package}: licence {ident} not named in its copyright file")
        star = files_star_license(text)
        if star and package not in REVIEWED_FILES_STAR and strong_copyleft(star.replace(" or ", " OR ").replace(" and ", " AND ")) \
                and not strong_copyleft(licence):
            problems.append(f"{package}: copyright says 'Files: * License: {star}', the table "
                            f"'{licence}'")
        programs = sorted(c for c in cols if c != "image")
        if strong_copyleft(licence):
            for program in programs or ["image"]:
                if program in expected.get(package, set()):
                    gpl_seen.add((program, package))
                    print(f"known GPL (expected, being removed): {package} ({licence}) "
                          f"in {program}")
                elif cols.get(program) == "installed":
                    print(f"note: {package} ({licence}) is installed in the image as a "
                          "separate program, not linked")
                else:
                    problems.append(f"GPL: {package} ({licence}) is linked into {program}")
        elif lgpl_only(licence):
            for program in programs:
                if cols[program] != "shared":
                    # LGPL-2.1 section 5 / LGPL-3 section 3 allow material from
                    # header files (layouts, small macros and inline
                    # functions) in object code; more than that needs the
                    # library linked dynamically. Reported for review.
                    print(f"review: {package} ({licence}) reaches {program} through its "
                          "headers only (allowed for header material; its code is not linked)")
    for package, programs in sorted(expected.items()):
        for program in sorted(programs):
            if (program, package) not in gpl_seen:
                problems.append(f"--expect-gpl {program}:{package}: no longer linked (or no "
                                "longer GPL): remove it from the expected list")

    if args.write:
        for package in sorted(set(rows) - set(links)):
            print(f"removed the row of {package}")
            del rows[package]
        lines[start:end] = format_table(rows)
        with open(args.third_party, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print(f"wrote {args.third_party}")
    summary = {c: sum(1 for cols in links.values() if c in cols) for c in COLUMNS}
    print("packages per program: " + ", ".join(f"{c} {n}" for c, n in summary.items()))
    for p in problems:
        print(p)
    if problems:
        print(f"check-licenses: {len(problems)} problem(s)")
        return 1
    print("check-licenses: THIRD_PARTY.md is current; no GPL in a shipped program"
          + (" beyond the expected list" if args.expect_gpl else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
