#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""
The tree refers to nothing outside itself, and every requirement ID
resolves in Documentation/requirements.rst. make check runs this as a
lint step; it prints one line per finding and exits 1 if there is any.

  scripts/check-refs.py [REPO]

Over every tracked file (this one excepted: it spells the patterns):
  - no path into a checkout next to this one or under the machine's work
    directory, no name of a note kept outside the tree;
  - no issue cited by number ("issue 4", "issue #4") or as "the issue";
  - every requirement ID (PREFIX-NN, ranges PREFIX-NN..MM and lists
    PREFIX-NN/MM included) is defined in requirements.rst, the prefixes
    being those requirements.rst defines; PREFIX-* names a family.
In requirements.rst: an ID is defined once, each entry has :Source: and
:Tests:, and every test, program or file it names exists in the tree.
"""
import fnmatch
import os
import re
import subprocess
import sys

REQS = 'Documentation/requirements.rst'
SELF = 'scripts/check-refs.py'

# What may not appear anywhere: (pattern, what it is).
OUTSIDE = [
    (re.compile(r'\.\./shared\b'), 'a path outside the repository'),
    (re.compile(r'\bshared/(?:notes|rfc|hooks)\b'),
     'a path outside the repository'),
    (re.compile(r'(?<![\w.])/work/'), 'an absolute path of this machine'),
    (re.compile(r'iwarp-conformance|helper-common'),
     'a note kept outside the repository'),
    (re.compile(r'\bissues?\s*#?\s*\d+', re.I), 'an issue number'),
    (re.compile(r"\bthe issue(?:'s)?\b", re.I), 'a reference to the issue'),
]

findings = []


def finding(path, line, msg):
    findings.append(f'{path}:{line}: {msg}')


def tracked(repo):
    out = subprocess.run(['git', '-C', repo, 'ls-files', '-z'],
                         check=True, capture_output=True).stdout
    return [p for p in out.decode().split('\0') if p]


def text_of(repo, path):
    full = os.path.join(repo, path)
    if not os.path.isfile(full):
        return None
    with open(full, 'rb') as f:
        data = f.read()
    if b'\0' in data:
        return None
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError:
        return None


def defined_ids(text):
    """ID -> line of its entry; entries are sections 'ID title' / '---'."""
    ids = {}
    lines = text.split('\n')
    heads = []
    for i in range(len(lines) - 1):
        if re.fullmatch(r'[=\-~]{3,}', lines[i + 1]) and lines[i].strip():
            heads.append(i)
    for k, i in enumerate(heads):
        m = re.match(r'([A-Z]+-\d+) \S', lines[i])
        if not m or not lines[i + 1].startswith('-'):
            continue
        rid = m.group(1)
        if rid in ids:
            finding(REQS, i + 1, f'{rid} defined twice (first at line '
                    f'{ids[rid]})')
            continue
        ids[rid] = i + 1
        end = heads[k + 1] if k + 1 < len(heads) else len(lines)
        body = '\n'.join(lines[i + 2:end])
        for field in (':Source:', ':Tests:'):
            if not re.search(r'^' + re.escape(field) + r' \S', body, re.M):
                finding(REQS, i + 1, f'{rid} has no {field} field')
    return ids


def expand(prefix, first, rest, pfx_alt):
    """'MPA', '50', '..53' -> MPA-50 ... MPA-53; '/DDP-07' -> DDP-07."""
    out = [f'{prefix}-{first}']
    last_p, last_n = prefix, first
    for sep, p, n in re.findall(r'(\.\.|/)(?:(' + pfx_alt + r')-)?(\d+)',
                                rest):
        p = p or last_p
        if sep == '..' and p == last_p and last_n != '*' and \
                int(n) > int(last_n):
            width = len(n)
            out += [f'{p}-{j:0{width}d}'
                    for j in range(int(last_n) + 1, int(n) + 1)]
        else:
            out.append(f'{p}-{n}')
        last_p, last_n = p, n
    return out


def selftest_names(repo, files):
    """program -> {'test': set, 'testf': set of (f, t), 'var': set of (f, v)}"""
    progs = {}
    for path in files:
        m = re.fullmatch(r'selftests/(xiw_\w+)\.c', path)
        if not m:
            continue
        text = text_of(repo, path) or ''
        progs[m.group(1)] = {
            'test': set(re.findall(r'^TEST\((\w+)\)', text, re.M)),
            'fixture': set(re.findall(r'^FIXTURE\((\w+)\)', text, re.M)),
            'testf': set(re.findall(r'^TEST_F(?:_TIMEOUT)?\((\w+),\s*(\w+)',
                                    text, re.M)),
            'var': set(re.findall(r'^FIXTURE_VARIANT_ADD\((\w+),\s*(\w+)\)',
                                  text, re.M)),
        }
    return progs


def test_exists(prog, name):
    parts = name.split('.')
    if len(parts) == 1:
        return name in prog['test'] or name in prog['fixture']
    f, t = parts[0], parts[-1]
    if not any(ff == f and fnmatch.fnmatchcase(tt, t)
               for ff, tt in prog['testf']):
        return False
    if len(parts) == 3:
        return any(ff == f and fnmatch.fnmatchcase(v, parts[1])
                   for ff, v in prog['var'])
    return len(parts) == 2


FILE_EXT = re.compile(r'\.(?:c|h|cpp|rst|md|sh|py|txt|cmake)$')


def check_named_tests(repo, files, text):
    progs = selftest_names(repo, files)
    basenames = {os.path.basename(p) for p in files}
    # An inline literal may go on over a line break: one space then.
    for lm in re.finditer(r'``([^`]+)``', text):
        no = text.count('\n', 0, lm.start()) + 1
        lit = re.sub(r'\s+', ' ', lm.group(1))
        m = re.fullmatch(r'(xiw_\w+)(?: (\S+))?', lit)
        if m and not FILE_EXT.search(lit):
            prog = progs.get(m.group(1))
            if prog is None:
                if f'selftests/{m.group(1)}.sh' not in files:
                    finding(REQS, no, f'no selftest program {m.group(1)}')
            elif m.group(2) and not test_exists(prog, m.group(2)):
                finding(REQS, no, f'no test {lit}')
            continue
        if re.fullmatch(r'\w+_test', lit):
            if f'userspace/tests/{lit}.cpp' not in files:
                finding(REQS, no, f'no host test {lit}')
            continue
        if re.fullmatch(r'(?:selftests|scripts|userspace|Documentation)/'
                        r'[\w./-]+', lit):
            if lit not in files and not (
                    lit.endswith('/') and
                    any(f.startswith(lit) for f in files)):
                finding(REQS, no, f'no file {lit} in the tree')
            continue
        if re.fullmatch(r'[\w-]+' + FILE_EXT.pattern, lit):
            if lit not in basenames:
                finding(REQS, no, f'no file named {lit} in the tree')
            continue
        if re.fullmatch(r'\w+(?:\.[\w*]+){1,2}', lit):
            if not any(test_exists(p, lit) for p in progs.values()):
                finding(REQS, no, f'no selftest has a test {lit}')


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    files = tracked(repo)
    reqs = text_of(repo, REQS)
    if reqs is None:
        print(f'check-refs: {REQS} missing')
        return 1
    ids = defined_ids(reqs)
    prefixes = sorted({i.split('-')[0] for i in ids}, key=len, reverse=True)
    pfx = '|'.join(prefixes)
    use = re.compile(r'(?<![\w-])(' + pfx + r')-(\d+|\*)(?!\w)'
                     r'((?:(?:\.\.|/)(?:(?:' + pfx + r')-)?\d+(?!\w))*)')
    for path in files:
        if path == SELF:
            continue
        text = text_of(repo, path)
        if text is None:
            continue
        for no, line in enumerate(text.split('\n'), 1):
            for pat, what in OUTSIDE:
                m = pat.search(line)
                if m:
                    finding(path, no, f'{what}: "{m.group(0)}"')
            for m in use.finditer(line):
                if m.group(2) == '*':
                    continue
                for rid in expand(m.group(1), m.group(2), m.group(3), pfx):
                    if rid not in ids:
                        finding(path, no, f'{rid} is not defined in {REQS}')
    check_named_tests(repo, files, reqs)
    for f in findings:
        print(f'check-refs: {f}')
    print(f'check-refs: {len(ids)} requirement IDs defined, '
          f'{len(findings)} finding(s)')
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main())
