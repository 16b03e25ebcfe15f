"""Tables the library returns print whole (pandas would cut them to "...")."""

import pandas as pd

from fairdecide import Independence, Separation, Sufficiency, optimize_policy, pareto_frontier
from fairdecide._common.tables import ResultTable
from fairdecide.datasets import make_bail_problem, sample_logged_data
from fairdecide.evaluation import audit


def test_returned_tables_print_every_row_and_column():
    problem, world = make_bail_problem()
    res = optimize_policy(problem, world, [Independence(), Separation(), Sufficiency()],
                          epsilon=0.1)
    tables = [res.to_frame(), Separation().breakdown(res.policy, world, problem),
              res.policy.to_frame(problem.action_labels),
              pareto_frontier(problem, world, Independence(), n_points=3),
              audit(sample_logged_data(problem, world, 500, random_state=0), problem)]
    with pd.option_context("display.max_rows", 4, "display.max_columns", 3,
                           "display.width", 40):
        for table in tables:
            assert isinstance(table, ResultTable)
            text = repr(table)
            assert "..." not in text and str(table) == text
            assert all(str(c) in text for c in table.columns)
            assert len(text.splitlines()) >= len(table)  # every row
    # operations keep the type and pandas behaviour
    breakdown = tables[1]
    assert isinstance(breakdown[breakdown["group"] == "group A"], ResultTable)
    assert breakdown["difference"].abs().sum() > 0
