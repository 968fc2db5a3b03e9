//! Unit tests of share trees: which account a user's jobs go to.

use super::*;

fn group(name: &str, members: &[&str], shares: Option<&str>) -> UserGroupConfig {
    UserGroupConfig {
        name: name.to_owned(),
        members: members.iter().map(|&m| m.to_owned()).collect(),
        user_shares: shares.map(|text| UserShares::parse_list(text).expect("valid")),
    }
}

fn share_tree(shares: &str, groups: &[UserGroupConfig]) -> (ShareTree, GroupDirectory) {
    let directory = GroupDirectory::build(groups).expect("valid groups");
    let shares: UserShares = shares.parse().expect("valid");
    (ShareTree::new(shares, &directory), directory)
}

fn leaf(tree: &mut ShareTree, groups: &GroupDirectory, user: &str) -> Option<(String, u32)> {
    let id = tree.leaf_for(user, groups)?;
    let node = tree.node(id);
    Some((node.name.clone(), node.account.shares))
}

#[test]
fn users_default_and_others() {
    let (mut tree, groups) = share_tree("USER_SHARES[[alice, 10] [default, 2]]", &[]);
    assert_eq!(
        leaf(&mut tree, &groups, "alice"),
        Some(("alice".into(), 10))
    );
    assert_eq!(leaf(&mut tree, &groups, "bob"), Some(("bob".into(), 2)));
    let (mut others, groups) = share_tree("USER_SHARES[[alice, 10] [others, 3]]", &[]);
    let bob = others.leaf_for("bob", &groups);
    let carol = others.leaf_for("carol", &groups);
    assert_eq!(bob, carol, "others is one account");
    assert_eq!(
        leaf(&mut others, &groups, "bob"),
        Some(("others".into(), 3))
    );
    let (mut only, groups) = share_tree("USER_SHARES[[alice, 1]]", &[]);
    assert_eq!(only.leaf_for("bob", &groups), None, "no shares");
}

#[test]
fn groups_collectively_individually_and_nested() {
    let groups = [
        group("team", &["ann", "ben"], None),
        group("lab", &["team", "cat"], None),
    ];
    let (mut tree, directory) = share_tree("USER_SHARES[[lab, 6] [team@, 2]]", &groups);
    // team@ gives ann and ben accounts of their own; cat, in lab only
    // (through no subgroup), counts against lab's.
    assert_eq!(leaf(&mut tree, &directory, "ann"), Some(("ann".into(), 2)));
    assert_eq!(leaf(&mut tree, &directory, "cat"), Some(("lab".into(), 6)));
    assert!(
        directory.contains("lab", "ben"),
        "members through subgroups"
    );
    assert_eq!(tree.leaf_for("dan", &directory), None);
}

#[test]
fn a_group_with_its_own_user_shares_is_a_subtree() {
    let groups = [group(
        "lab",
        &["ann", "ben", "cat"],
        Some("([ann, 3] [others, 1])"),
    )];
    let (mut tree, directory) = share_tree("USER_SHARES[[lab, 10] [zed, 5]]", &groups);
    let ann = tree.leaf_for("ann", &directory).expect("a leaf");
    let ben = tree.leaf_for("ben", &directory).expect("a leaf");
    assert_eq!(tree.node(ann).account.shares, 3);
    assert_eq!(tree.node(ben).name, "others");
    let lab = tree.node(ann).parent.expect("under lab");
    assert_eq!(tree.node(lab).name, "lab");
    assert_eq!(tree.node(lab).kind, NodeKind::Interior);
    assert_eq!(tree.node(lab).account.shares, 10);
    // Pending jobs count up the tree.
    tree.add_pending(ann, 1, JobId(1));
    tree.add_pending(ben, 2, JobId(2));
    assert_eq!(tree.node(lab).pending_below, 2);
    assert_eq!(tree.node(ROOT).pending_below, 2);
    tree.remove_pending(ann, 1);
    assert_eq!(tree.node(lab).pending_below, 1);
    assert!(tree.covers(lab, ben) && !tree.covers(ann, ben));
}

#[test]
fn group_loops_and_strangers_in_user_shares_are_refused() {
    let looped = [group("a", &["b"], None), group("b", &["a"], None)];
    assert!(GroupDirectory::build(&looped).is_err());
    let stranger = [group("lab", &["ann"], Some("([zed, 1])"))];
    let error = GroupDirectory::build(&stranger).expect_err("zed is not in lab");
    assert!(error.message.contains("not a member"), "{}", error.message);
}
