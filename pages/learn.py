"""Learn: one card per registered mechanism (generated from the registry), the invalid-Wishart story, a glossary.

Nothing here is hard-coded per mechanism: a new module in ``dpcore/mechanisms/`` appears automatically.
"""

from __future__ import annotations

import streamlit as st

import dpcore
from dpcore import inspect as insp
from dpcore.privacy import GUARANTEE_LABELS, NEIGHBOURING_LABELS
from pages import _nav
from pages import _ui as ui

ui.init_state()

GROUP_INTROS = {
    "pure": "Pure ε-DP: the output distribution changes by at most a factor $e^{\\varepsilon}$ when one person's "
            "record changes.",
    "approx": "(ε, δ)-DP: the same, except for an event of probability at most δ.",
    "heuristic-mcmc": "Would be ε-DP with an exact sampler; the implemented sampler is an MCMC chain, so the "
                      "guarantee holds only if the chain has converged — no diagnostic can prove that.",
    "claimed-invalid": "Published with a privacy proof that is wrong. Kept only as labelled exhibits; the Inspect "
                       "page hides them unless you ask for them.",
    "none": "Not private: reference points (the best and the data-blind) for every comparison.",
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
        cex = mech.counterexample_delta(1.0)
        if cex is not None:
            st.markdown(f":red[**Counterexample:** at ε = 1 the claim fails for every δ < {cex:.4f}.]")
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
removed the same Wishart mechanism; and this app's **Audit** page, which finds the impossible outputs (SN at ε = 1:
δ ≥ 0.62 from 5,000 releases per neighbour). A *correct* Wishart mechanism exists (Sheffet, ALT 2019): it adds many
more fictitious records, so the noise is far above any single record and the bad event has probability below δ.
"""
    )
    table = insp.counterexample_table(mechs)
    if table.empty:
        st.info("No registered mechanism declares a counterexample δ.")
        return
    st.markdown("**Counterexample δ** — each claim fails for every δ below these values (computed from the registry; "
                "default options):")
    fmt = {c: "{:.4f}" for c in table.columns if c.startswith("ε")}
    st.dataframe(table.drop(columns="id").style.format(fmt), hide_index=True, width="content")


GLOSSARY = (
    ("ε (epsilon)",
     "The privacy budget. Changing one person's record can change the probability of any outcome by at most a "
     "factor $e^{\\varepsilon}$. Smaller ε = better privacy and more noise; ε = 1 means a factor of at most 2.7. "
     "It is a bound on what *any* attacker can learn, whatever they already know."),
    ("δ (delta)",
     "A small probability with which the $e^{\\varepsilon}$ bound may fail. It should be much smaller than 1/n "
     "(e.g. 10⁻⁵ or less); a δ of 1/n would allow publishing one person's record outright. Pure ε-DP "
     "mechanisms have δ = 0."),
    ("Replace-one vs add/remove neighbours",
     "Two datasets are neighbours if they differ in one person. *Replace-one*: same n, one record swapped (n is "
     "public). *Add/remove*: one record added or deleted, so n itself is private: no released number may be clipped "
     "to [0, n] or divided by the exact n. Replacing is at most an add plus a remove, so the same "
     "mechanism typically needs up to twice the noise under replace-one (e.g. sensitivity √2 vs 1 for AG)."),
    ("Norm bound and clipping",
     "Every row is scaled by a public bound B and rows longer than B are clipped, so ‖x‖ ≤ 1. That bounds how much "
     "one person can move C = Σ xxᵀ, which is what the noise is calibrated to. Too small a B clips many rows "
     "(bias); too large a B wastes the budget on noise (variance). B must be chosen without looking at the data."),
    ("Why data-dependent preprocessing is not private",
     "Centring on the empirical mean, scaling by the observed maximum or choosing B from the data all use the data "
     "*before* the noise is added, and none of it is paid for in ε. One outlier can change them, and that change "
     "shows in the output. Use public bounds, or spend part of the budget on a DP estimate; the ledger marks "
     "unpaid steps in red."),
    ("Public bounds and the schema of an upload",
     "Scaling a column by its observed minimum and maximum, or one-hot encoding the categories that happen to occur, "
     "reads the data before any noise is added: the largest income in the file moves every scaled value, and a "
     "category seen once reveals that someone has it. A *public schema* fixes each column's range and category list "
     "from public knowledge (a codebook, the instrument's scale). Then every step is per record — values outside the "
     "range are clamped, unseen categories become all-zero indicators — and costs no budget. The Data page drafts "
     "a schema from the data, marks those values red, and turns the ledger green once you replace or confirm them; "
     "the what-if numbers then show the utility of the pipeline you would really run."),
    ("Why utility metrics use the true data",
     "Captured variance, principal angles, Frobenius error and SVM accuracy compare the private output with the "
     "truth, so they must read the true data. That is fine in this sandbox, where you evaluate mechanisms, but "
     "the charts themselves are not private releases and should not be published as such."),
)


st.title("Learn")
st.markdown("What each mechanism does, what it guarantees and where it comes from. Cards are generated from the "
            "mechanism registry, grouped by guarantee (strongest first).")

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

st.header("Glossary")
cols = st.columns(2)
for i, (term, text) in enumerate(GLOSSARY):
    with cols[i % 2].container(border=True):
        st.markdown(f"**{term}**  \n{text}")
