//! Media previews (helper B).
