"""The chain of custody: where each load's waste went after the worksite. `chain` allocates a
facility's inbound loads to what left it (first in, first out per class) and follows a load to
where it is now; `stock` keeps each facility's stock per class (received, shipped on, processed
on site) and finds the stock left standing; `certificates` draws the Certificado de Destinação
Final from that chain."""
