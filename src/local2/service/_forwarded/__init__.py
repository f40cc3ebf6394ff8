"""The names the service's face forwards from the packages below it, one module per package,
so that a surface using one of them imports only that package's part (``lazy_loader`` loads
``local2.service._forwarded.<package>`` on first use of a name). Issue 54 asks for a face
that lists only the service's own names; until then these are what the surfaces reach
through it."""
