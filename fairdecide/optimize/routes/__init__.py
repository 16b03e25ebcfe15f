"""The routes: how a session (problem, belief, criteria, trade-off) is solved, each
chosen by the criteria's declared capabilities, and the sessions they run on."""
