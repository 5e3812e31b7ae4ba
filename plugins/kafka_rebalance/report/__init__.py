"""report.html: what a plan does and what an execution did, as inline SVG charts in a Jinja2 page."""
