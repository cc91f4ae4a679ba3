"""Library words → CLI flags: the one mapping that makes errors and notes reaching a CLI user name the flags they
can type (``--norm-bound B``, ``--feature-scaling minmax``) instead of the Python arguments the library speaks of
(``norm_bound=B``, ``feature_scaling='minmax'``). The dashboard has its own mapping to widget names
(:data:`dpcore.explain.display.PLAIN_WORDS`).
"""

from __future__ import annotations

import re

#: Whole phrases first: library advice with no single-flag equivalent, said as the CLI would say it.
PHRASES: dict[str, str] = {
    "load_csv(..., schema=S); CLI: --schema S": "--schema S",
    "feature_scaling='minmax' / norm_mode='max_norm' (both not private)": "--feature-scaling minmax (not private)",
    "use norm_mode='clip' with your public bound, or drop norm_bound": "give your public bound with --norm-bound B",
    "use norm_mode='clip' with a public bound": "give a public bound with --norm-bound B",
    "; use norm_mode='clip'": "; give a public bound with --norm-bound B",
    "allow_invalid=True (CLI: --allow-invalid)": "--allow-invalid",
    "enable allow_invalid (CLI: --allow-invalid)": "pass --allow-invalid",
    "choose the label column with label=, not as a role": "choose the label column with --label COLUMN, not as a role",
    "centering='public' needs center=<array of length d> (a public centre in raw units)":
        "--center public needs public ranges (a public schema)",
    "sample size must": "each --sample-sizes value must",
    "centre otherwise (DP mean, or none)": "use --center dp (a DP mean with its own budget) or --center none",
    "drop the delimiter/decimal/encoding/thousands overrides": "drop --delimiter/--decimal/--encoding/--thousands",
}

#: Library keyword arguments → the flag that sets them (``name=value`` becomes ``--flag value``).
FLAGS: dict[str, str] = {
    "norm_bound": "--norm-bound", "feature_scaling": "--feature-scaling", "centering": "--center",
    "neighbouring": "--neighbouring", "missing": "--missing", "label": "--label", "schema": "--schema",
    "epsilon": "--epsilon", "delta": "--delta", "k": "--k", "n_components": "--k", "trials": "--trials",
    "time_cap": "--time-cap", "time_limit": "--time-cap", "allow_invalid": "--allow-invalid",
    "random_state": "--seed", "seed": "--seed", "sample_sizes": "--sample-sizes", "reservoir_size": "--reservoir",
    "delimiter": "--delimiter", "decimal": "--decimal", "encoding": "--encoding", "thousands": "--thousands",
    "jobs": "--jobs",
    "n_jobs": "--jobs",
}

#: Where a command's flag differs from the default one (``sweep --epsilons 0.1,1``).
COMMAND_FLAGS: dict[str, dict[str, str]] = {"sweep": {"epsilon": "--epsilons"}}

_PHRASE = re.compile("|".join(re.escape(p) for p in sorted(PHRASES, key=len, reverse=True)))
_NAMES = "|".join(sorted(map(re.escape, FLAGS), key=len, reverse=True))
#: ``name=value`` with a quoted, braced or bare value (a bare value ends at a space, comma, semicolon or bracket).
_ASSIGNMENT = re.compile(rf"(?<![\w.-])({_NAMES})=('[^']*'|\"[^\"]*\"|<[^>]*>|[^\s,;)]+)")
#: A message (or a clause after "; ") that starts with a parameter name: "k must be <= 13".
_SUBJECT = re.compile(rf"(^|; )({_NAMES}) (?=must|is |needs|should|has )")


def flag_for(name: str, command: str | None = None) -> str:
    """The CLI flag of library argument ``name`` for ``command`` (``epsilon`` → ``--epsilons`` in a sweep)."""
    return COMMAND_FLAGS.get(command or "", {}).get(name) or FLAGS[name]


def _assignment(match: re.Match, command: str | None) -> str:
    flag, value = flag_for(match.group(1), command), match.group(2)
    if value == "True":
        return flag
    if value[:1] in "'\"" and value[-1:] == value[:1]:
        value = value[1:-1]
    return f"{flag} {value}"


def cli_words(text: str, command: str | None = None) -> str:
    """``text`` (an error message or a ledger note) with the library's argument names as ``command``'s flags."""
    text = _PHRASE.sub(lambda m: PHRASES[m.group(0)], text or "")
    text = _ASSIGNMENT.sub(lambda m: _assignment(m, command), text)
    return _SUBJECT.sub(lambda m: m.group(1) + flag_for(m.group(2), command) + " ", text)
