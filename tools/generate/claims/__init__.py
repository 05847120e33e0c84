"""The claims of the paper judged against the committed records, one module per study
(``results_claims.ROWS`` puts them in order; ``records`` reads the studies, ``formats`` writes
the numbers, ``values`` fills the value markers of the prose)."""
