"""Airflow-facing steps: the pipeline the DAGs call, the clusters file, staging of plans, the approval
and deferrable execute operators, the balanced-or-plan decision, and the web app behind Airflow's login."""
