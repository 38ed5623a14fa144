"""Field operations around the CTR: the transporter's saved CTR templates (`templates`, pages in
`template_views`, API in `template_api`), the provisional CTRs a driver's phone issues offline
(`offline`, the bundle and the service worker in `offline_views`), and the corrections of a
received CTR that the transporter or the receiver proposes (`corrections`, pages in
`correction_views`, API in `correction_api`)."""
