#!/usr/bin/env python3
"""gen_fortran.py -- the Fortran bindings of qmmm-accel, generated from the public C headers.

Reads the families and their public headers from cmake/qmmm_families.txt and writes into OUT:
  qmmm_accel_<family>_c.f90  per family with a header: its constants, bind(C) types and the bind(C) interface
                             c_<name> of every public function (the raw C ABI; the idiomatic wrappers of
                             fortran_iface/*.f90 are written by hand on top of these modules)
  qmmm_accel_f77.cpp         the module-free interface: external subroutines qmmm_f77_<name>_ for the functions
                             listed in fortran_iface/f77_functions.txt (compiled into libqmmm_accel)
  qmmm_accel_f77.fi          its constants (every constant of the headers) and its CALL lines, for INCLUDE
  qmmm_mirror_tables.c       sizeof/offsetof of every struct (the C side of test_fortran_mirror)
  qmmm_mirror_layout.f90     the same structs and fields seen from the generated Fortran types

  gen_fortran.py generate --root SRC --out DIR
  gen_fortran.py check-wrappers --root SRC [--stamp FILE]

check-wrappers fails unless every public C function has a hand-written wrapper of the same name in
fortran_iface/*.f90 or is listed, with its reason, in fortran_iface/raw_only.txt.

The headers are regular (QMMM_API functions, enums with explicit values, numeric #defines, typedef structs,
opaque handle typedefs, one function-pointer typedef). Anything else stops the generator with file:line, so a
header the generator cannot map fails the build. Standard library only.
"""
import argparse
import os
import re
import sys

FAMILIES = 'cmake/qmmm_families.txt'
TYPE_DEFAULTS = 'fortran_iface/type_defaults.txt'
F77_FUNCTIONS = 'fortran_iface/f77_functions.txt'
RAW_ONLY = 'fortran_iface/raw_only.txt'

# Scalar C types and their Fortran kinds (iso_c_binding).
SCALARS = {'int': 'integer(c_int)', 'int32_t': 'integer(c_int32_t)', 'int64_t': 'integer(c_int64_t)',
           'double': 'real(c_double)', 'float': 'real(c_float)'}
INTEGERS = {'int', 'int32_t', 'int64_t'}
# The module-free interface replaces an options pointer by these fields (default INTEGER, or DOUBLE PRECISION for
# a double), the rest at their defaults.
F77_OPTION_FIELDS = {'qmmm_options': ('qmmm_options_default', [('backend', 'int'), ('precision', 'int'),
                                                               ('n_threads', 'int')]),
                     'qmmm_pol_options': ('qmmm_pol_options_default', [('n_threads', 'int'), ('max_iter', 'int'),
                                                                       ('tolerance', 'double'), ('backend', 'int')])}
# ... and an output struct by these of its fields, written back after the call whatever the status (a solve that
# did not converge reports its last iterate).
F77_OUT_FIELDS = {'qmmm_pol_stats': [('iterations', 'int'), ('residual', 'double'), ('e_pol', 'double'),
                                     ('e_pol_ext', 'double'), ('e_pol_mm', 'double')]}


class GenError(Exception):
    pass


def fail(where, what):
    raise GenError(f'{where}: {what}')


def header_path(root, family, header):
    """Where a family's public header lives (fortran_iface/CMakeLists.txt computes the same paths)."""
    return os.path.join(root, 'src_cxx', family, header)


def read_families(root):
    """[(name, deps, header path)] of the families that have a public header, in dependency order."""
    path = os.path.join(root, FAMILIES)
    fams = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            cols = line.split()
            if len(cols) != 4:
                fail(f'{path}:{no}', f'expected 4 columns (name deps header kind), got {len(cols)}')
            name, deps, header, _kind = cols
            if header == '-':
                continue
            deps = [] if deps == '-' else deps.split(',')
            fams.append((name, deps, header_path(root, name, header)))
    if not fams:
        fail(path, 'no family with a public header')
    return fams


def strip_comments(text):
    """The text with every comment blanked out, newlines kept (so line numbers stay right)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            if j < 0:
                j = n
            out.append(re.sub(r'[^\n]', ' ', text[i:j + 2]))
            i = j + 2
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


class Header:
    """One parsed header: constants, structs, handles, function-pointer types and functions, in file order."""

    def __init__(self, path, family):
        self.path, self.family = path, family
        self.constants = []   # (name, value text, 'int' | 'real')
        self.structs = []     # (name, [(field, ctype, pointer?, dim text or None)])
        self.handles = []     # opaque handle typedefs
        self.funptrs = []     # function-pointer typedefs
        self.functions = []   # (name, return ctype, [(ctype, pointer depth, const?, name)], line)


NUMBER = r'-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)'


def parse_header(path, family, known_types):
    h = Header(path, family)
    with open(path) as f:
        lines = strip_comments(f.read()).split('\n')
    # Preprocessor lines: the include guard, includes, the QMMM_API block and the extern "C" braces are known;
    # a #define with a value must be a numeric constant.
    body, skip = [], []
    for no, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith('#'):
            d = s[1:].strip()
            if d.startswith(('ifdef __cplusplus', 'if defined(_WIN32)')):
                skip.append(True)
            elif d.startswith(('ifndef', 'ifdef', 'if ')):
                skip.append(False)
            elif d.startswith(('else', 'elif')):  # the branches of the QMMM_API block
                pass
            elif d.startswith('endif'):
                if skip:
                    skip.pop()
            elif d.startswith('include'):
                pass
            elif d.startswith('define'):
                m = re.fullmatch(r'define\s+(\w+)(?:\s+(.*))?', d)
                if not m:
                    fail(f'{path}:{no}', f'cannot read #{d}')
                name, value = m.group(1), (m.group(2) or '').strip()
                if not value or name == 'QMMM_API' or any(skip):
                    continue
                if not name.startswith('QMMM_') or not re.fullmatch(NUMBER, value):
                    fail(f'{path}:{no}', f'#define {name} {value}: only numeric QMMM_ constants can be mapped')
                h.constants.append((name, value, 'int' if re.fullmatch(r'-?\d+', value) else 'real'))
            else:
                fail(f'{path}:{no}', f'unknown preprocessor line #{d}')
            body.append((no, ''))
        else:
            body.append((no, '' if any(skip) else line))
    # Statements end with ';' at brace depth 0.
    stmt, start, depth = [], None, 0
    for no, line in body:
        for ch in line:
            if start is None and not ch.isspace():
                start = no
            stmt.append(ch)
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ';' and depth == 0:
                parse_statement(h, tokens(''.join(stmt)), f'{path}:{start}', known_types)
                stmt, start = [], None
        stmt.append(' ')
    if ''.join(stmt).strip():
        fail(f'{path}:{start}', 'text after the last statement')
    return h


def tokens(s):
    """s with one space between words and punctuation, so the patterns below see one spelling."""
    return ' '.join(re.sub(r'([{}();,*\[\]])', r' \1 ', s).split())


def parse_statement(h, s, where, known_types):
    m = re.fullmatch(r'enum \{ (.*) \} ;', s)
    if m:
        for item in m.group(1).split(','):
            item = item.strip()
            if not item:
                continue
            mm = re.fullmatch(r'(QMMM_\w+) = (-?\d+)', item)
            if not mm:
                fail(where, f'enum entry "{item}": only QMMM_NAME = integer can be mapped')
            h.constants.append((mm.group(1), mm.group(2), 'int'))
        return
    m = re.fullmatch(r'typedef struct (\w+) \{ (.*) \} (\w+) ;', s)
    if m:
        if m.group(1) != m.group(3):
            fail(where, f'typedef struct {m.group(1)} ... {m.group(3)}: the tag and the name must agree')
        fields = []
        for decl in m.group(2).split(' ;'):
            decl = decl.strip()
            if decl:
                fields.append(parse_field(decl, where, known_types))
        h.structs.append((m.group(1), fields))
        known_types[m.group(1)] = 'struct'
        return
    m = re.fullmatch(r'typedef struct (\w+) \* (\w+) ;', s)
    if m:
        name = m.group(2)
        h.handles.append(name)
        known_types[name] = 'handle'
        return
    m = re.fullmatch(r'typedef int \( \* (\w+) \) \( (.*) \) ;', s)
    if m:
        h.funptrs.append(m.group(1))
        known_types[m.group(1)] = 'funptr'
        return
    m = re.fullmatch(r'QMMM_API (.+?) (qmmm_\w+) \( (.*) \) ;', s)
    if m:
        ret = m.group(1)
        if ret not in ('int', 'const char *'):
            fail(where, f'{m.group(2)} returns "{ret}": only int and const char * can be mapped')
        params = [] if m.group(3).strip() in ('void', '') else \
            [parse_param(p, where, known_types) for p in m.group(3).split(' , ')]
        h.functions.append((m.group(2), 'int' if ret == 'int' else 'const char *', params, where))
        return
    fail(where, f'cannot map this declaration to Fortran: {s[:100]}')


def parse_field(decl, where, known_types):
    m = re.fullmatch(r'(const )?(\w+) (\* )?(\w+)(?: \[ (\w+) \])?', decl)
    if not m:
        fail(where, f'struct field "{decl}": only "type name", "type *name" and "type name[N]" can be mapped')
    const, ctype, ptr, name, dim = m.groups()
    if not ptr and ctype not in SCALARS and known_types.get(ctype) not in ('funptr', 'struct', 'handle'):
        fail(where, f'struct field "{decl}": unknown type {ctype}')
    return (name, ctype, bool(ptr), dim)


def parse_param(p, where, known_types):
    p = p.strip()
    m = re.fullmatch(r'(const )?(\w+) ((?:\* (?:const )?)*)(\w+)', p)
    if not m:
        fail(where, f'parameter "{p}" cannot be mapped')
    const, ctype, stars, name = m.groups()
    depth = stars.count('*')
    if ctype not in SCALARS and ctype not in ('char', 'void') and ctype not in known_types:
        fail(where, f'parameter "{p}": unknown type {ctype}')
    if depth == 0 and ctype not in SCALARS and known_types.get(ctype) != 'handle':
        fail(where, f'parameter "{p}": a {ctype} by value cannot be mapped')
    return (ctype, depth, bool(const), name)


# ---------------------------------------------------------------------------------------------- Fortran output

def wrap(line, width=100):
    """Free-form line continuation: breaks at a space outside quotes once the line is longer than width (a comment
    or a line without such a space stays whole: gfortran takes 132 columns)."""
    out, indent = [], len(line) - len(line.lstrip()) + 4
    if line.lstrip().startswith('!'):
        return line
    while len(line) > width:
        quote, cut = None, -1
        for i, ch in enumerate(line[:width - 2]):
            if quote:
                quote = None if ch == quote else quote
            elif ch in '\'"':
                quote = ch
            elif ch == ' ' and i > indent:
                cut = i
        if cut <= indent:
            break
        out.append(line[:cut].rstrip() + ' &')
        line = ' ' * indent + line[cut:].lstrip()
    out.append(line)
    return '\n'.join(out)


def f_real(value):
    """A C double literal as a Fortran c_double literal with the same digits."""
    if not re.search(r'[.eE]', value):
        value += '.0'
    return value + '_c_double'


def read_defaults(root, structs):
    """{(struct, field): value text} from fortran_iface/type_defaults.txt; unknown names fail."""
    path = os.path.join(root, TYPE_DEFAULTS)
    known = {(s, f[0]): f for s, fields in structs for f in fields}
    out = {}
    with open(path) as fh:
        for no, line in enumerate(fh, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r'(\w+)\.(\w+)\s*=\s*(\S+)', line)
            if not m or (m.group(1), m.group(2)) not in known:
                fail(f'{path}:{no}', f'"{line}" names no field of a public struct')
            out[(m.group(1), m.group(2))] = m.group(3)
    return out


def fortran_component(struct, field, defaults, known_types):
    name, ctype, ptr, dim = field
    if ptr:
        decl, init = 'type(c_ptr)', 'c_null_ptr'
    elif known_types.get(ctype) == 'funptr':
        decl, init = 'type(c_funptr)', 'c_null_funptr'
    elif ctype in SCALARS:
        decl = SCALARS[ctype]
        init = defaults.get((struct, name), '0')
        if ctype in ('double', 'float') and re.fullmatch(NUMBER, init):
            init = f_real(init)
    else:
        fail(struct, f'field {name}: a {ctype} inside a struct is not mapped')
    if (struct, name) in defaults and (ptr or ctype not in SCALARS):
        fail(TYPE_DEFAULTS, f'{struct}.{name}: pointers start null, no other default')
    shape = f'({dim})' if dim else ''
    return f'    {decl} :: {name}{shape} = {init}'


def fortran_dummy(param, known_types):
    ctype, depth, _const, name = param
    if depth == 0 and known_types.get(ctype) == 'handle':
        return f'type(c_ptr), value :: {name}'
    if depth == 0:
        return f'{SCALARS[ctype]}, value :: {name}'
    if depth == 1 and known_types.get(ctype) == 'handle':
        return f'type(c_ptr) :: {name}'   # the new handle is written through it
    return f'type(c_ptr), value :: {name}'  # any other pointer: NULL stays expressible, arrays and scalars alike


def family_module(h, deps, defaults, known_types):
    mod = f'qmmm_accel_{h.family}_c'
    names = [c[0] for c in h.constants] + [s for s, _ in h.structs] + ['c_' + f[0] for f in h.functions]
    o = [f'! {mod}.f90 -- GENERATED by scripts/gen_fortran.py from {os.path.basename(h.path)}; do not edit.',
         '! The raw C ABI of the family: its constants, its structs as bind(C) types (default-initialised as the',
         '! C *_options_default functions fill them; fortran_iface/type_defaults.txt) and the bind(C) interface',
         '! c_<name> of every public function. Every pointer argument is type(c_ptr), value (NULL stays',
         '! expressible); a pointer to a new handle is type(c_ptr) by reference. The idiomatic wrappers are',
         f'! hand-written in module qmmm_accel_{h.family} (fortran_iface/qmmm_accel_{h.family}.f90).',
         f'module {mod}',
         '  use, intrinsic :: iso_c_binding']
    o += [f'  use qmmm_accel_{d}_c' for d in deps]
    o += ['  implicit none', '  private']
    for i in range(0, len(names), 4):
        o.append(wrap('  public :: ' + ', '.join(names[i:i + 4])))
    if h.constants:
        o.append('')
    for name, value, kind in h.constants:
        if kind == 'int':
            o.append(f'  integer, parameter :: {name} = {value}')
        else:
            o.append(f'  real(c_double), parameter :: {name} = {f_real(value)}')
    for sname, fields in h.structs:
        o += ['', f'  type, bind(c) :: {sname}']
        o += [fortran_component(sname, f, defaults, known_types) for f in fields]
        o.append(f'  end type {sname}')
    if h.functions:
        o += ['', '  interface']
    for fname, ret, params, _where in h.functions:
        args = ', '.join(p[3] for p in params)
        o.append(wrap(f"    function c_{fname}({args}) bind(c, name='{fname}') result(c_status)"))
        o.append('      import')
        o += ['      ' + fortran_dummy(p, known_types) for p in params]
        o.append('      integer(c_int) :: c_status' if ret == 'int' else '      type(c_ptr) :: c_status')
        o.append('    end function')
    if h.functions:
        o.append('  end interface')
    o.append(f'end module {mod}')
    return '\n'.join(o) + '\n'


# -------------------------------------------------------------------------------------- the mirror test tables

def mirror_c(headers):
    o = ['/* qmmm_mirror_tables.c -- GENERATED by scripts/gen_fortran.py; do not edit. The C side of',
         ' * test_fortran_mirror: sizeof and offsetof of every public struct, from the headers themselves. */',
         '#include <stddef.h>', '#include <stdint.h>', '#include <string.h>', '']
    o += [f'#include "{os.path.basename(h.path)}"' for h in headers]
    o += ['', '/* 0 and *size, or 1 for an unknown struct. */',
          'int qmmm_mirror_sizeof(const char *s, int64_t *size) {']
    for h in headers:
        for s, _ in h.structs:
            o.append(f'    if (strcmp(s, "{s}") == 0) {{ *size = (int64_t)sizeof({s}); return 0; }}')
    o += ['    return 1;', '}', '', '/* 0 and *offset, or 1 for an unknown struct or field. */',
          'int qmmm_mirror_offsetof(const char *s, const char *f, int64_t *offset) {']
    for h in headers:
        for s, fields in h.structs:
            for fld in fields:
                o.append(f'    if (strcmp(s, "{s}") == 0 && strcmp(f, "{fld[0]}") == 0) '
                         f'{{ *offset = (int64_t)offsetof({s}, {fld[0]}); return 0; }}')
    o += ['    return 1;', '}']
    return '\n'.join(o) + '\n'


def mirror_f(headers):
    structs = [(h.family, s, fields) for h in headers for s, fields in h.structs]
    o = ['! qmmm_mirror_layout.f90 -- GENERATED by scripts/gen_fortran.py; do not edit. The Fortran side of',
         '! test_fortran_mirror: the size and field offsets of every generated bind(C) type, compared with what',
         '! the C compiler says for the struct (qmmm_mirror_tables.c).',
         'module qmmm_mirror_layout',
         '  use, intrinsic :: iso_c_binding']
    o += sorted({f'  use qmmm_accel_{fam}_c' for fam, _, _ in structs})
    o += ['  implicit none', '  private', '  public :: mirror_layout', '  interface',
          "    integer(c_int) function c_sizeof_of(s, size) bind(c, name='qmmm_mirror_sizeof')",
          '      import :: c_char, c_int, c_int64_t',
          '      character(kind=c_char), intent(in) :: s(*)',
          '      integer(c_int64_t), intent(out) :: size', '    end function',
          "    integer(c_int) function c_offset_of(s, f, offset) bind(c, name='qmmm_mirror_offsetof')",
          '      import :: c_char, c_int, c_int64_t',
          '      character(kind=c_char), intent(in) :: s(*), f(*)',
          '      integer(c_int64_t), intent(out) :: offset', '    end function', '  end interface',
          'contains', '',
          '  ! Compares every struct and field; failures counts the mismatches, n_structs and n_fields what was compared.',
          '  subroutine mirror_layout(failures, n_structs, n_fields)',
          '    integer, intent(inout) :: failures',
          '    integer, intent(out) :: n_structs, n_fields']
    o += [f'    type({s}), target :: v_{s}' for _, s, _ in structs]
    o += ['    n_structs = 0', '    n_fields = 0']
    for _, s, fields in structs:
        o.append(f"    call size_is('{s}', c_sizeof(v_{s}))")
        for fld in fields:
            o.append(f"    call at('{s}', '{fld[0]}', c_loc(v_{s}), c_loc(v_{s}%{fld[0]}))")
    o += ['  contains',
          '    subroutine size_is(s, fsize)',
          '      character(len=*), intent(in) :: s',
          '      integer(c_size_t), intent(in) :: fsize',
          '      integer(c_int64_t) :: csize',
          '      n_structs = n_structs + 1',
          '      if (c_sizeof_of(s // c_null_char, csize) /= 0) csize = -1',
          '      if (csize /= fsize) then',
          "        print '(a,i0,a,i0)', 'MISMATCH: size of ' // s // ': Fortran ', fsize, ', C ', csize",
          '        failures = failures + 1', '      end if', '    end subroutine',
          '    subroutine at(s, f, base, field)',
          '      character(len=*), intent(in) :: s, f',
          '      type(c_ptr), intent(in) :: base, field',
          '      integer(c_int64_t) :: coff, foff',
          '      n_fields = n_fields + 1',
          '      if (c_offset_of(s // c_null_char, f // c_null_char, coff) /= 0) coff = -1',
          '      foff = transfer(field, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)',
          '      if (coff /= foff) then',
          "        print '(a,i0,a,i0)', 'MISMATCH: offset of ' // s // '%' // f // ': Fortran ', foff, ', C ', coff",
          '        failures = failures + 1', '      end if', '    end subroutine',
          '  end subroutine mirror_layout', 'end module qmmm_mirror_layout']
    return '\n'.join(wrap(line) for line in o) + '\n'


# ------------------------------------------------------------------------------ the module-free interface

def read_f77_list(root, functions):
    """[(f77 name, C function, {C param: expression})] from fortran_iface/f77_functions.txt."""
    path = os.path.join(root, F77_FUNCTIONS)
    out = []
    with open(path) as fh:
        for no, line in enumerate(fh, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            cols = line.split()
            if len(cols) < 2 or cols[1] not in functions:
                fail(f'{path}:{no}', f'"{line}": expected "f77-name public-C-function [param=expression ...]"')
            fixed = {}
            params = {p[3] for p in functions[cols[1]][1]}
            for a in cols[2:]:
                m = re.fullmatch(r'(\w+)=(\S+)', a)
                if not m or m.group(1) not in params:
                    fail(f'{path}:{no}', f'"{a}" names no parameter of {cols[1]}')
                fixed[m.group(1)] = m.group(2)
            out.append((cols[0], cols[1], fixed, f'{path}:{no}'))
    return out


def c_wrap(head, items, close=1, width=116):
    """head + items joined by ', ' (+ ')' when close), broken after commas so that lines stay within width."""
    lines, line = [], head
    indent = ' ' * len(head) if len(head) < 40 else ' ' * 8
    for i, it in enumerate(items):
        piece = it + (', ' if i + 1 < len(items) else (')' if close else ''))
        if len(line) + len(piece.rstrip()) > width and line.strip() not in ('', head.strip()):
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return '\n'.join(lines)


def c_decl(ctype, depth, const, name):
    return f'{"const " if const else ""}{ctype} {"*" * depth}{name}'


def f77_wrapper(f77, cname, fixed, where, fn, known_types, header):
    ret, params = fn
    args, call, pre, post, fortran_args, hidden = [], [], [], [], [], []
    destroys = cname.endswith('_destroy')
    for ctype, depth, const, name in params:
        if name in fixed:
            expr = fixed[name]
            if re.fullmatch(r'[a-z_]\w*', expr) and expr != 'nullptr' and expr not in {p[3] for p in params}:
                if depth == 0:
                    fail(where, f'{name}={expr}: a new argument must replace a pointer')
                args.append(c_decl(ctype, depth, const, expr))
                fortran_args.append(expr)
            call.append(expr)
            continue
        kind = known_types.get(ctype)
        if depth == 0 and kind == 'handle':
            args.append(f'{"int64_t" if destroys else "const int64_t"} *{name}')
            call.append(f'reinterpret_cast<{ctype}>(static_cast<intptr_t>(*{name}))')
            if destroys:
                post.append(f'if (*status == QMMM_SUCCESS) *{name} = 0;')
        elif depth == 1 and kind == 'handle':
            args.append(f'int64_t *{name}')
            pre.append(f'{ctype} new_handle = nullptr;')
            call.append('&new_handle')
            post.append(f'*{name} = static_cast<int64_t>(reinterpret_cast<intptr_t>(new_handle));')
        elif depth == 0 and ctype in INTEGERS:
            args.append(f'const int *{name}')  # counts and enums: default INTEGER
            call.append(f'*{name}')
        elif depth == 0:
            args.append(f'const {ctype} *{name}')
            call.append(f'*{name}')
        elif depth == 1 and const and ctype in F77_OPTION_FIELDS:
            default_fn, fields = F77_OPTION_FIELDS[ctype]
            args += [f'const {t} *{x}' for x, t in fields]
            fortran_args += [x for x, _ in fields]
            pre += [f'{ctype} o;', f'{default_fn}(&o);', ' '.join(f'o.{x} = *{x};' for x, _ in fields)]
            call.append('&o')
            continue
        elif depth == 1 and not const and ctype in F77_OUT_FIELDS:
            fields = F77_OUT_FIELDS[ctype]
            args += [f'{t} *{x}' for x, t in fields]
            fortran_args += [x for x, _ in fields]
            pre.append(f'{ctype} out{{}};')
            call.append('&out')
            post.append(' '.join(f'*{x} = out.{x};' for x, _ in fields))
            continue
        elif depth == 1 and const and ctype == 'char':
            # A CHARACTER argument: its length is the hidden size_t every Fortran compiler on 64-bit Linux passes
            # by value after the arguments; trailing blanks are not part of the name.
            args.append(f'const char *{name}')
            hidden.append(f'size_t {name}_len')
            pre += [f'size_t {name}_n = {name}_len;', f'while ({name}_n > 0 && {name}[{name}_n - 1] == \' \') --{name}_n;',
                    f'const std::string {name}_s({name}, {name}_n);']
            call.append(f'{name}_s.c_str()')
        elif depth == 1 and ctype in SCALARS:
            args.append(c_decl(ctype, 1, const, name))
            call.append(name)
        else:
            fail(where, f'{cname}: parameter {name} ({ctype}, {depth} *) has no module-free mapping')
        if name not in fixed:
            fortran_args.append(name)
    if ret == 'const char *':
        args += ['char *text', 'int *status', 'size_t text_len']
        fortran_args += ['text', 'status']
        body = [f'const char *m = {cname}({", ".join(call)});',
                'const size_t k = std::min(text_len, std::strlen(m));',
                'std::memcpy(text, m, k);', 'std::memset(text + k, \' \', text_len - k);',
                '*status = QMMM_SUCCESS;']
        comment = ('TEXT: the text, blank-padded or cut to LEN(TEXT) (the hidden trailing length every Fortran '
                   'compiler on 64-bit Linux passes by value, size_t)')
    else:
        args.append('int *status')
        fortran_args.append('status')
        args += hidden
        body = pre + ['FortranIndices base;', f'*status = {cname}({", ".join(call)});'] + post
        comment = None
        if hidden:
            comment = ('CHARACTER arguments: their lengths are the hidden trailing size_t arguments every Fortran '
                       'compiler on 64-bit Linux passes by value; trailing blanks are dropped')
    sig = c_wrap(f'QMMM_API void qmmm_f77_{f77}_(', args)
    call_line = f'CALL QMMM_F77_{f77.upper()}({", ".join(a.upper() for a in fortran_args)})'
    text = [f'// {call_line}', f'// {cname} ({header}); counts by default INTEGER, handles INTEGER*8.']
    if comment:
        text.append(f'// {comment}')
    text += [sig + ' {'] + [c_wrap('    ', [b], 0) for b in body] + ['}', f'QMMM_F77_ALIAS(qmmm_f77_{f77})', '']
    return '\n'.join(text), call_line


# The one subroutine that has no C function behind it: every other one reads counts, enums and statuses as 4-byte
# INTEGER, which a code built with -fdefault-integer-8 (or -i8) does not pass. The caller passes IPROBE = (1, 2);
# their bytes say how wide its INTEGER is (on little-endian machines, the only ones supported). IPROBE(1) is
# read as 4 bytes first, and a second 4-byte word only where the first two 4-byte words read (1, 0), that is where
# the array is two 8-byte INTEGERs: nothing past the caller's array is read.
F77_INTEGER_SIZE_CALL = 'CALL QMMM_F77_INTEGER_SIZE(IPROBE, STATUS)'
F77_INTEGER_SIZE = r"""// CALL QMMM_F77_INTEGER_SIZE(IPROBE, STATUS)
// The check a program makes once: are its default INTEGERs the 4 bytes that every other subroutine here reads and
// writes (counts, enums, statuses)? IPROBE is an INTEGER array of 2 holding (1, 2). On return IPROBE(1) is the
// size of the caller's INTEGER in bytes and STATUS, written at that size, is QMMM_SUCCESS for 4 and
// QMMM_ERR_INVALID_ARG otherwise (built with -fdefault-integer-8 or -i8: every STATUS would read 4294967296 times
// some garbage); IPROBE not (1, 2) is QMMM_ERR_INVALID_ARG with IPROBE(1) unchanged.
QMMM_API void qmmm_f77_integer_size_(int32_t *probe, int32_t *status) {
    if (probe[0] == 1 && probe[1] == 2) {
        probe[0] = 4;
        *status = qmmm_set_error(QMMM_SUCCESS, "");
    } else if (probe[0] == 1 && probe[1] == 0 && probe[2] == 2 && probe[3] == 0) {
        const int64_t size = 8, s = qmmm_set_error(QMMM_ERR_INVALID_ARG,
            "qmmm_f77_integer_size: this program's default INTEGER is 8 bytes (-fdefault-integer-8, -i8); the "
            "qmmm_f77_* subroutines take 4-byte INTEGER counts and statuses: build without it, or declare them "
            "INTEGER*4");
        std::memcpy(probe, &size, sizeof size);
        std::memcpy(status, &s, sizeof s);
    } else {
        *status = qmmm_set_error(QMMM_ERR_INVALID_ARG,
                                 "qmmm_f77_integer_size: IPROBE must be an INTEGER array of 2 holding (1, 2)");
    }
}
QMMM_F77_ALIAS(qmmm_f77_integer_size)
"""


def f77_sources(root, headers, known_types):
    functions = {f[0]: (f[1], f[2]) for h in headers for f in h.functions}
    header_of = {f[0]: os.path.basename(h.path) for h in headers for f in h.functions}
    cpp = ['// qmmm_accel_f77.cpp -- GENERATED by scripts/gen_fortran.py from the public headers and',
           '// fortran_iface/f77_functions.txt; do not edit. The module-free Fortran interface (FFTW\'s legacy interface',
           '// is the model): external subroutines any Fortran compiler calls without a .mod file, from fixed or free',
           '// form. Every argument is passed by reference, as Fortran 77 passes it; handles are INTEGER*8, counts,',
           '// enums and statuses default INTEGER of 4 bytes (QMMM_F77_INTEGER_SIZE checks that a program\'s is),',
           '// reals DOUBLE PRECISION; an options pointer becomes BACKEND,',
           '// PRECISION, NTHREADS (qmmm_pol_options: N_THREADS, MAX_ITER, TOLERANCE, BACKEND; qmmm_pol_stats: ITERATIONS,',
           '// RESIDUAL, E_POL, E_POL_EXT, E_POL_MM). The last argument is always the status (0 = success). Messages count points,',
           '// charges and nuclei from 1. Constants: include \'qmmm_accel_f77.fi\'.',
           '//',
           '// Names: lower case with one trailing underscore (gfortran, Intel, NVIDIA, Flang, Cray on Linux) and with',
           '// two (g77 and gfortran -fsecond-underscore), both defined here.',
           '#include <algorithm>', '#include <cstddef>', '#include <cstdint>', '#include <cstring>',
           '#include <string>', '']
    cpp += [f'#include "{os.path.basename(h.path)}"' for h in headers]
    cpp += ['', 'namespace {', '',
            '// Messages of the call count from 1 (Fortran), then from the caller\'s base again (1 where C set it).',
            'class FortranIndices {',
            'public:',
            '    FortranIndices() { qmmm_get_index_base(&old_), qmmm_set_index_base(1); }',
            '    ~FortranIndices() { qmmm_set_index_base(old_); }',
            '    FortranIndices(const FortranIndices &) = delete;',
            '    FortranIndices &operator=(const FortranIndices &) = delete;',
            '',
            'private:',
            '    int old_ = 0;',
            '};', '', '}  // namespace', '',
            '#define QMMM_F77_ALIAS(name) extern "C" QMMM_API decltype(name##_) name##__ __attribute__((alias(#name "_")));',
            '', 'extern "C" {', '']
    cpp += F77_INTEGER_SIZE.splitlines()
    calls = [(F77_INTEGER_SIZE_CALL, None)]
    for f77, cname, fixed, where in read_f77_list(root, functions):
        text, call_line = f77_wrapper(f77, cname, fixed, where, functions[cname], known_types, header_of[cname])
        cpp.append(text)
        calls.append((call_line, cname))
    cpp.append('}  // extern "C"')
    return '\n'.join(cpp) + '\n', calls


def fixed_form(line):
    if len(line) > 72:
        fail('qmmm_accel_f77.fi', f'line longer than 72 columns: {line}')
    return line


def f77_include(headers, calls):
    o = ['!     qmmm_accel_f77.fi -- GENERATED by scripts/gen_fortran.py; do not',
         '!     edit. The constants of the C headers and the subroutines of the',
         '!     module-free Fortran interface. INCLUDE it in fixed or free form:',
         '!     each line fits columns 7-72 and uses no continuation. Counts and',
         '!     statuses are 4-byte INTEGER: not for -fdefault-integer-8 or -i8',
         '!     (QMMM_F77_INTEGER_SIZE below tells).']
    for h in headers:
        if not h.constants:
            continue
        o.append(f'!     {os.path.basename(h.path)}')
        for name, value, kind in h.constants:
            if kind == 'int':
                o += [f'      INTEGER {name}', f'      PARAMETER ({name} = {value})']
            else:
                v = value.replace('e', 'D').replace('E', 'D')
                if 'D' not in v:
                    v += 'D0'
                o += [f'      DOUBLE PRECISION {name}', f'      PARAMETER ({name} = {v})']
    o.append('!     The subroutines (arguments as the C function named; the last is')
    o.append('!     the status):')
    for call, cname in calls:
        words, line = call.replace(',', ', ').split(), '!       '
        for w in words:
            if len(line) + len(w) + 1 > 72:
                o.append(line.rstrip())
                line = '!         '
            line += w + ' '
        o.append(line.rstrip())
        o.append(f'!         as {cname}' if cname else
                 '!         IPROBE(1:2) = (1, 2): STATUS 0 if INTEGER is 4 bytes')
    return '\n'.join(fixed_form(x) for x in o) + '\n'


# ---------------------------------------------------------------------------------------------- the commands

def parse_all(root):
    known_types, headers = {}, []
    for name, deps, path in read_families(root):
        if not os.path.exists(path):
            fail(os.path.join(root, FAMILIES), f'family {name}: header {path} not found')
        headers.append((parse_header(path, name, known_types), deps))
    return headers, known_types


def generate(root, out):
    parsed, known_types = parse_all(root)
    headers = [h for h, _ in parsed]
    structs = [(s, fields) for h in headers for s, fields in h.structs]
    defaults = read_defaults(root, structs)
    files = {}
    for h, deps in parsed:
        deps = [d for d in deps if any(x.family == d for x in headers)]
        files[f'qmmm_accel_{h.family}_c.f90'] = family_module(h, deps, defaults, known_types)
    cpp, calls = f77_sources(root, headers, known_types)
    files['qmmm_accel_f77.cpp'] = cpp
    files['qmmm_accel_f77.fi'] = f77_include(headers, calls)
    files['qmmm_mirror_tables.c'] = mirror_c(headers)
    files['qmmm_mirror_layout.f90'] = mirror_f(headers)
    os.makedirs(out, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(out, name), 'w') as f:
            f.write(text)


def check_wrappers(root, stamp):
    parsed, _ = parse_all(root)
    public = {f[0]: f[3] for h, _ in parsed for f in h.functions}
    wrapped = {}
    iface = os.path.join(root, 'fortran_iface')
    for name in sorted(os.listdir(iface)):
        if not name.endswith('.f90'):
            continue
        with open(os.path.join(iface, name)) as f:
            for m in re.finditer(r'^\s*(?:integer\s+|logical\s+|type\([^)]*\)\s+)?(?:function|subroutine|interface)\s+'
                                 r'(qmmm_\w+)', f.read(), re.M | re.I):
                wrapped[m.group(1).lower()] = name
    path = os.path.join(root, RAW_ONLY)
    raw = {}
    errors = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            cols = line.split(None, 1)
            if len(cols) < 2:
                errors.append(f'{path}:{no}: {cols[0]} needs its reason')
            elif cols[0] not in public:
                errors.append(f'{path}:{no}: {cols[0]} is not a public C function')
            elif cols[0] in wrapped:
                errors.append(f'{path}:{no}: {cols[0]} has a wrapper in {wrapped[cols[0]]}; drop it from the list')
            raw[cols[0]] = no
    for name, where in public.items():
        if name not in wrapped and name not in raw:
            errors.append(f'{where}: {name} has no Fortran wrapper: write one in fortran_iface/ or list it with '
                          f'its reason in {RAW_ONLY}')
    if errors:
        fail('fortran bindings', '\n  ' + '\n  '.join(errors))
    print(f'fortran bindings: {len(public)} public functions, {len(public) - len(raw)} wrapped, {len(raw)} raw only')
    if stamp:
        # The check may run before the generator has made the output folder (parallel make in a fresh build).
        os.makedirs(os.path.dirname(os.path.abspath(stamp)), exist_ok=True)
        with open(stamp, 'w') as f:
            f.write('ok\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('command', choices=['generate', 'check-wrappers'])
    ap.add_argument('--root', required=True, help='the repository root')
    ap.add_argument('--out', help='generate: the output folder')
    ap.add_argument('--stamp', help='check-wrappers: a file written on success')
    a = ap.parse_args()
    try:
        if a.command == 'generate':
            if not a.out:
                ap.error('generate needs --out')
            generate(a.root, a.out)
        else:
            check_wrappers(a.root, a.stamp)
    except GenError as e:
        print(f'gen_fortran.py: error: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
