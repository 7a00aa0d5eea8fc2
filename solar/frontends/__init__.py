"""Frontends turn a program written in a framework into the Affine Loop IR. `views` and `builder`
are shared by every frontend; each framework has its own lowering table."""
