//! The engine's tests, one binary by subject: exact RDP against mpmath (`reference_rdp`),
//! the tight accountant (`pld`, `pld_props`, `pld_coverage`), its schemes and views
//! (`sampling`, `allocation`, `group`, `meaning`, `compare`), properties (`engine_props`) and
//! the corners that used to hang (`extremes`). Each module says what it checks and against
//! which independent reference.

mod allocation;
mod compare;
mod engine_props;
mod extremes;
mod group;
mod meaning;
mod pld;
mod pld_coverage;
mod pld_props;
mod reference_rdp;
mod sampling;
