//! The template to copy for your own gateway: replace the target with yours
//! (anything implementing `portcullis::Target`). Here, the reference.
#![no_main]

portcullis::fuzz_gateway!(portcullis::reference::Reference::strict());
