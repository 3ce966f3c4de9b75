//! Power cuts of a guest's disks: the guest asks ([`GuestSwitch`], its trial's switch) and the
//! host's device servers cut the emulated drives behind the disks ([`answer`]), over the
//! guest's channel. Times cross as durations from the moment of asking.

use super::channel::{Channel, Msg, PowerAnswer, PowerAsk};
use crate::engine::InFlight;
use crate::stack::powercut::{CutDone, PowerSwitch};
use std::cell::RefCell;

/// The host's answer to `ask`, done with `switch` (the drives behind the guest's disks).
pub fn answer(switch: &dyn PowerSwitch, ask: PowerAsk) -> PowerAnswer {
    let done = match ask {
        PowerAsk::Arm {
            in_ns,
            after_writes,
        } => switch.arm(in_ns, after_writes).map(|()| PowerAnswer::Done),
        PowerAsk::Went => switch.went().map(|ago_ns| PowerAnswer::Went { ago_ns }),
        PowerAsk::Cut { in_flight, seed } => switch
            .cut(in_flight, seed)
            .map(|done| PowerAnswer::Cut { done }),
        PowerAsk::Revive { fast } => switch.revive(fast).map(|()| PowerAnswer::Done),
    };
    done.unwrap_or_else(|message| PowerAnswer::Failed { message })
}

/// A guest's switch: every call is a question to the host over the channel.
pub struct GuestSwitch<'a> {
    ch: RefCell<&'a mut Channel>,
}

impl<'a> GuestSwitch<'a> {
    pub fn new(ch: &'a mut Channel) -> Self {
        GuestSwitch {
            ch: RefCell::new(ch),
        }
    }

    fn ask(&self, ask: PowerAsk) -> Result<PowerAnswer, String> {
        let mut ch = self.ch.borrow_mut();
        ch.send(&Msg::Power(ask)).map_err(|e| e.to_string())?;
        match ch.recv().map_err(|e| e.to_string())? {
            Some(r) => match r.msg {
                Msg::Powered(PowerAnswer::Failed { message }) => Err(message),
                Msg::Powered(a) => Ok(a),
                other => Err(format!("the host answered {other:?}")),
            },
            None => Err("the host closed the channel".into()),
        }
    }
}

impl PowerSwitch for GuestSwitch<'_> {
    fn arm(&self, in_ns: Option<u64>, after_writes: Option<u64>) -> Result<(), String> {
        self.ask(PowerAsk::Arm {
            in_ns,
            after_writes,
        })
        .map(|_| ())
    }

    fn went(&self) -> Result<Option<u64>, String> {
        match self.ask(PowerAsk::Went)? {
            PowerAnswer::Went { ago_ns } => Ok(ago_ns),
            other => Err(format!("the host answered {other:?}")),
        }
    }

    fn cut(&self, in_flight: InFlight, seed: u64) -> Result<CutDone, String> {
        match self.ask(PowerAsk::Cut { in_flight, seed })? {
            PowerAnswer::Cut { done } => Ok(done),
            other => Err(format!("the host answered {other:?}")),
        }
    }

    fn revive(&self, fast: bool) -> Result<(), String> {
        self.ask(PowerAsk::Revive { fast }).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A host that records what it was asked.
    #[derive(Default)]
    struct Host(Mutex<Vec<String>>);

    impl PowerSwitch for Host {
        fn arm(&self, in_ns: Option<u64>, _: Option<u64>) -> Result<(), String> {
            self.0.lock().unwrap().push(format!("arm {in_ns:?}"));
            Ok(())
        }
        fn went(&self) -> Result<Option<u64>, String> {
            Ok(Some(7))
        }
        fn cut(&self, _: InFlight, seed: u64) -> Result<CutDone, String> {
            Ok(CutDone {
                ago_ns: seed,
                devices: vec![],
            })
        }
        fn revive(&self, _: bool) -> Result<(), String> {
            Err("no".into())
        }
    }

    #[test]
    fn a_guest_asks_and_the_host_answers_over_the_channel() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let host = std::thread::spawn(move || {
            let mut ch = Channel::new(Box::new(b.try_clone().unwrap()), Box::new(b));
            let h = Host::default();
            while let Ok(Some(r)) = ch.recv() {
                let Msg::Power(ask) = r.msg else { break };
                ch.send(&Msg::Powered(answer(&h, ask))).unwrap();
            }
            let asked = h.0.lock().unwrap().clone();
            asked
        });
        let mut ch = Channel::new(Box::new(a.try_clone().unwrap()), Box::new(a));
        {
            let g = GuestSwitch::new(&mut ch);
            g.arm(Some(5), None).unwrap();
            assert_eq!(g.went().unwrap(), Some(7));
            assert_eq!(g.cut(InFlight::Torn, 11).unwrap().ago_ns, 11);
            assert_eq!(g.revive(false).unwrap_err(), "no");
        }
        drop(ch);
        assert_eq!(host.join().unwrap(), ["arm Some(5)"]);
    }
}
