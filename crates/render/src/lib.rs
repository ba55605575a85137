//! Every way deja shows text that came from a transcript or from the team
//! store, in one place: nobody has to remember which field of which answer
//! to neutralise.
//!
//! - [`term`]: for a terminal. C0 and C1 control characters, DEL and the
//!   Unicode bidirectional controls are replaced by visible stand-ins, so a
//!   transcript cannot set the window title, write the clipboard, make a
//!   link, move the cursor or hide text; [`term::screen`] filters a whole
//!   output, letting through only the styles deja itself writes.
//! - [`frame`]: for an agent. Recalled text sits inside one delimited frame
//!   that says it is data; every copy of the frame's tag inside stored text
//!   is neutralised, control characters are replaced, answers are cut on
//!   character boundaries.
//! - [`html`]: for a web page. The same cleaning as for a terminal, then
//!   HTML escaping, so stored text shows as text and never as markup;
//!   whole messages rendered with their code blocks highlighted and long
//!   blocks folded.
//! - [`structured`]: for an agent reading JSON (an MCP `structuredContent`):
//!   every string of the value neutralised and bounded, and the value
//!   carries the trust marker and the frame's notice itself.

pub mod frame;
pub mod html;
pub mod structured;
pub mod term;

pub use frame::{cut, neutralise, untrusted};
pub use term::clean;
