"""``omniqual bench``: fixed-rate (or swept) open-loop benchmark runs against one target.

``options`` parses and checks what the user asked for, ``transport`` turns planned requests into
HTTP (a lean HTTP/1.1 pool on uvloop), ``target`` brings up (or checks) the deployment,
``runner`` drives the phases and ``result`` is the JSON a run writes (vLLM-Omni's
diffusion-benchmark fields plus omniqual's validity verdict).
"""
