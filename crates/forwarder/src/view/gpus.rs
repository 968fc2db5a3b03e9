//! What the submission cluster knows of a remote queue's GPUs (issue 27,
//! item 5): the slots of its hosts by how many GPUs they have, and its free
//! slots by how many GPUs are free there ([`GpuSlots`]), from its last
//! counter update or, before one, its hello (every slot free). A forward
//! that takes free slots is counted here as on the slot figures: it takes
//! them from every entry, as the submission cluster cannot tell which
//! hosts it lands on.

use mcfed_protocol::GpuSlots;

/// One remote queue's GPUs as the view keeps them.
#[derive(Clone, Debug, Default)]
pub(super) struct QueueGpus {
    /// From the last update: slots by GPUs, free slots by free GPUs.
    pub(super) base: Option<(GpuSlots, GpuSlots)>,
    /// From the last hello: slots by GPUs.
    pub(super) facts: Option<GpuSlots>,
    /// Slots by GPUs now.
    pub(super) total: GpuSlots,
    /// Free slots by free GPUs now, less the forwards counted since.
    pub(super) free: GpuSlots,
}

impl QueueGpus {
    /// Starts the figures now again from the last update or hello; says
    /// whether the slots by GPUs changed (a change of what could ever fit).
    pub(super) fn reset(&mut self) -> bool {
        let (total, free) = match (&self.base, &self.facts) {
            (Some((total, free)), _) => (total.clone(), free.clone()),
            (None, Some(total)) => (total.clone(), total.clone()),
            (None, None) => (GpuSlots::default(), GpuSlots::default()),
        };
        let changed = total != self.total;
        self.total = total;
        self.free = free;
        changed
    }
}
