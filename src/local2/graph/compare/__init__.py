"""Comparing models in one turn, and the critic in the loop (DESIGN §9).

- :mod:`.spec`: who answers (respondent ``a`` is the agent's model, ``b`` another model or
  temperature) and the services each respondent runs with.
- :mod:`.respond`: one respondent's generate/tool loop as a subgraph, run once per respondent
  as parallel branches (LangGraph ``Send``).
- :mod:`.pair`: the nodes after both answered: publish both, grade and compare them, remember
  them, record the judge's vote.
- :mod:`.retry`: a second attempt at a low-graded answer with the critique as context.
- :mod:`.topology`: where these paths join the chat graph.
- :mod:`.session`: what a person does afterwards: prefer an answer, retry, switch attempts.
"""
