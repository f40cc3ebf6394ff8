"""Two respondents answer one question (another model or temperature), side by side.

- :mod:`.spec`: who answers (respondent ``a`` is the agent's model, ``b`` another model or
  temperature) and the services each respondent runs with;
- :mod:`.respond`: one respondent's answer loop as a subgraph, run once per respondent as
  parallel branches (LangGraph ``Send``);
- :mod:`.pair`: the nodes after both answered: publish both, grade and compare them,
  remember them, record the judge's vote;
- :mod:`.votes`: the arena's votes a compare turn leaves.

Where these nodes join the chat graph: :mod:`local2.graph.topology`; what a person does
afterwards (prefer an answer): :mod:`local2.service.chat._ratings`.
"""
