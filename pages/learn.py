"""Learn: the glossary first (with a link to the Privacy basics lesson), one card per registered mechanism
(generated from the registry), the invalid-Wishart story.

Nothing here is hard-coded per mechanism: a new module in ``dpcore/mechanisms/`` appears automatically.
"""

from __future__ import annotations

import streamlit as st

import dpcore
from dpcore.core.privacy import GUARANTEE_LABELS, NEIGHBOURING_LABELS
from dpcore.explain import inspect as insp
from dpcore.explain.statements import format_bound, mechanism_delta_statement
from dpcore.explain.teaching import GLOSSARY
from dpcore.vocabulary import Guarantee
from pages import ui
from pages.ui import nav as _nav

ui.init_state()

GROUP_INTROS = {
    Guarantee.PURE:
        "Pure ε-DP: the output distribution changes by at most a factor $e^{\\varepsilon}$ when one person's record "
        "changes.",
    Guarantee.APPROX:
        "(ε, δ)-DP: the same factor $e^{\\varepsilon}$ plus an additive slack δ on every event's probability "
        "(weaker than “ε-DP except with probability δ”).",
    Guarantee.HEURISTIC_MCMC:
        "Would be ε-DP with an exact sampler; the implemented sampler is an MCMC chain, so the "
        "guarantee holds only if the chain has converged — no diagnostic can prove that. PPCA's "
        "convergence verdict (Inspect, sweep rows) compares the two halves of the chain's last T/2 "
        "scans on what it samples — the captured variance and the subspace (split-R̂ ≤ 1.05) — and "
        "asks for enough independent draws (effective sample size ≥ 50). 'Not converged' means the "
        "chain visibly had not settled; 'converged' means only that no such sign was found. The "
        "verdict is computed from the private data (not private) and never changes the release.",
    Guarantee.CLAIMED_INVALID:
        "Published with a privacy proof that is wrong. Kept only as labelled exhibits; the Inspect "
        "page hides them unless you ask for them.",
    Guarantee.NONE: "Not private: reference points (the best and the data-blind) for every comparison.",
}


def _param_text(p) -> str:
    bits = [f"default `{p.default}`"]
    if p.kind == "choice":
        bits.append("choices " + ", ".join(f"`{c}`" for c in p.choices))
    elif p.low is not None or p.high is not None:
        lo = "−∞" if p.low is None else f"{p.low:g}"
        hi = "∞" if p.high is None else f"{p.high:g}"
        bits.append(f"range [{lo}, {hi}]")
    return f"- **`{p.name}`** ({p.kind}; {'; '.join(bits)}): {p.description}"


def _card(mech) -> None:
    with st.expander(f"{mech.name}", expanded=False):
        st.markdown(f"{ui.guarantee_badge(mech)}  `{mech.id}` · output: **{mech.output}**"
                    f"{' · uses δ' if mech.uses_delta else ''}")
        st.markdown(f"**What it does.** {ui.public_text(mech.summary)}")
        if mech.description:
            st.markdown(ui.public_text(mech.description))
        if mech.formula:
            st.latex(mech.formula)
        nbs = ", ".join(NEIGHBOURING_LABELS.get(r, r) for r in mech.neighbourings)
        st.markdown(f"**Guarantee:** {GUARANTEE_LABELS[mech.guarantee]}  \n**Neighbouring relations:** {nbs}  \n"
                    f"**Where the proof holds:** {ui.public_text(mech.domain)}  \n"
                    f"**Cost:** {mech.cost or 'not stated'}  \n**Source:** {ui.public_text(mech.reference)}")
        if mech.id.startswith("ss_"):
            st.page_link(_nav.ROOT / "pages" / "inspect.py", icon=":material/search:",
                         label="Try it on the Inspect page: *Load the Singhal–Steinke showcase* (near-exact data, "
                               "where it works)")
        statement = mechanism_delta_statement(mech, 1.0)
        if statement is not None:
            st.markdown(f":red[**Counterexample.** {statement}]")
        if mech.params:
            st.markdown("**Parameters**\n" + "\n".join(_param_text(p) for p in mech.params))


def _wishart_story(mechs) -> None:
    st.header("Why the published Wishart mechanisms are not private")
    st.markdown(
        r"""
Two published mechanisms (Imtiaz & Sarwate's "SN", ICASSP 2016, and Jiang, Xie & Zhang's Wishart mechanism,
AAAI 2016) release **Ĉ = C + W**, where W is a random *Wishart* matrix. Their proofs compare the density of the
noise at Ĉ − C and at Ĉ − C′ and find the ratio is at most $e^{\varepsilon}$. The step they skip:

1. **Wishart noise is always positive definite.** So the output always lies "above" the true matrix: Ĉ − C is
   positive definite, with probability one.
2. **The region where outputs can land depends on the data.** Take a neighbouring dataset that adds a record u
   with ‖u‖ = 1 in place of an all-zero record: C′ = C + uuᵀ. Under the neighbour, every output satisfies
   Ĉ − C′ ≻ 0.
3. **Some outputs of the real data are impossible under the neighbour.** If Ĉ − C′ is *not* positive definite,
   the neighbour could never have produced Ĉ: its density there is zero, and the likelihood ratio is infinite. Seeing
   such an output tells an attacker with certainty which dataset was used.
4. **This is not a rare event.** It happens with probability $1 - e^{-\varepsilon}$ for SN and
   $1 - e^{-\varepsilon/3}$ for Jiang et al. — 63 % and 28 % at ε = 1. A mechanism that leaks with
   probability p cannot be (ε, δ)-DP for any δ < p, so no small δ rescues the claim.

The density comparison in the proofs is only valid where *both* densities are positive; the support of the output
moves with the data, and that is what breaks the proof. Sources: Amin et al. (NeurIPS 2019) §1.2 ("later
discovered that the algorithm was in fact not differentially private"); IBM diffprivlib issues #23 and #42, which
removed the same Wishart mechanism; and this app's **Audit** page, which finds the impossible outputs (link
below). A *correct* Wishart mechanism exists (Sheffet, ALT 2019): it adds many more fictitious records, so the noise
is far above any single record and the bad event has probability below δ.
"""
    )
    table = insp.counterexample_table(mechs)
    if table.empty:
        st.info("No registered mechanism declares a counterexample δ.")
        return
    st.page_link(_nav.ROOT / "pages" / "audit.py", query_params={"preset": "sn_imtiaz"}, icon=":material/fact_check:",
                 label="See it happen: the Audit's SN preset runs SN 5,000 times on two neighbouring datasets")
    st.markdown("**Counterexample δ** — at each ε, each claim fails for every δ below these values (computed from "
                "the registry; default options):")
    fmt = {c: format_bound for c in table.columns if c.startswith("ε")}
    st.dataframe(table.drop(columns="id").style.format(fmt, na_rep="—"), hide_index=True, width="content")


st.title("Learn")
st.markdown("What each mechanism does, what it guarantees and where it comes from. Cards are generated from the "
            "mechanism registry, grouped by guarantee (strongest first).")
st.page_link(_nav.ROOT / "pages" / "basics.py", icon=":material/lightbulb:",
             label="New to differential privacy? Start with **Privacy basics**: ε, δ and neighbouring datasets, "
                   "with live demos")

st.header("Glossary")
cols = st.columns(2)
for i, (term, text) in enumerate(GLOSSARY):
    with cols[i % 2].container(border=True):
        st.markdown(f"**{term}**  \n{text}")

with ui.handle_errors():
    mechanisms = dpcore.list_mechanisms()
    groups = insp.group_by_guarantee(mechanisms, include_invalid=True)
    st.header(f"Mechanisms ({len(mechanisms)})")
    for guarantee, members in groups.items():
        label = GUARANTEE_LABELS[guarantee]
        # Capitalise ASCII only: str.upper() would turn 'ε' into the Greek capital 'Ε', which reads as 'E'.
        st.subheader(label[:1].upper() + label[1:] if label[:1].isascii() else label)
        if guarantee in GROUP_INTROS:
            st.caption(GROUP_INTROS[guarantee])
        for mech in members:
            _card(mech)

    _wishart_story(mechanisms)
