"""Security alerts: attack category, severity, and whether it was blocked or an attacker got in."""

from __future__ import annotations

from common import C, fill


def A(cat, sev, text, blocked=False, login=False):
    """An alert core; ``sev`` 0 low / 1 medium / 2 high, None when debatable (not asked)."""
    return C(text, cat=cat, sev=sev, blocked=blocked, login=login)


CORES = [
    A("brute_force", 0, "{n} failed SSH logins for root on {host} from {ip} within 10 minutes. fail2ban blocked the source IP automatically and no login succeeded.", blocked=True),
    A("brute_force", 1, "Password spraying detected: 40 different accounts each saw one failed login from {ip} in 5 minutes. No account was accessed so far and the IP is not blocked."),
    A("brute_force", 2, "After {n} failed attempts, a successful VPN login for {user} came from {ip}, an address never seen before for this user. {user} confirms it wasn't them.", login=True),
    A("brute_force", 0, "Account {user} was locked after 10 wrong passwords from {ip2}. The lockout policy worked and no login succeeded.", blocked=True),
    A("brute_force", 1, "Failed logins to the admin portal from a single address have continued for three hours; nothing has been blocked yet and no login has succeeded."),
    A("brute_force", 2, "Credential stuffing against the customer login page: {n} attempts, 12 of which succeeded, and those sessions are still active.", login=True),
    A("malware", 0, "Antivirus quarantined a trojan in an email attachment on {host} before it was opened.", blocked=True),
    A("malware", 2, "EDR on {host}: an unknown process is encrypting files on the shared drive and renaming them to *.locked. It is still running."),
    A("malware", 1, "A user downloaded a file flagged as potentially unwanted software (a browser toolbar). It has not been run; needs a look."),
    A("malware", 2, "Word on {host} spawned PowerShell, which downloaded and ran a payload from {ip}; the host now beacons to that IP every 60 seconds."),
    A("malware", 0, "The mail gateway's antivirus detected a known malware dropper (a malicious Office macro) in an inbound attachment and stripped it, so nobody received the file.", blocked=True),
    A("malware", 1, "A new scheduled task named 'updater' on {host} runs an unsigned executable from the temp folder. Not confirmed malicious yet."),
    A("phishing", 0, "{user} reported an email impersonating the CEO asking for gift cards. Nobody replied and no other copies were found."),
    A("phishing", 2, "{n} employees received a fake 'password expiry' email linking to a look-alike login page, and three of them typed in their passwords.", login=None),
    A("phishing", 0, "The email filter blocked a campaign of 200 messages spoofing our bank's domain before delivery.", blocked=True),
    A("phishing", 1, "An 'overdue invoice' email with a link to a fake document portal reached 15 inboxes; we don't know yet whether anyone clicked."),
    A("phishing", 1, "Finance got an email from a look-alike supplier domain asking to change the bank details for the next payment. Awaiting verification."),
    A("phishing", 2, "After a phishing call an employee approved an MFA push they didn't start, and the attacker signed in to their mailbox from {ip}.", login=True),
    A("data_exfiltration", 2, "{host} has uploaded 38 GB to an unknown cloud storage bucket in the last hour, far outside its normal pattern. Nobody authorised it and the transfer is still running."),
    A("data_exfiltration", 0, "DLP blocked an attempt to email a spreadsheet with 2,000 customer card numbers to a personal Gmail address.", blocked=True),
    A("data_exfiltration", None, "A departing employee copied the entire sales folder to a USB stick yesterday evening."),
    A("data_exfiltration", 1, "{host} is sending thousands of long, random-looking subdomain queries to one external domain. Possibly data being smuggled out via DNS tunnelling, not confirmed."),
    A("data_exfiltration", 2, "A full export of the customer table was downloaded by a service account at 3am from {ip}, an address outside our network.", login=None),
    A("data_exfiltration", 0, "An employee tried to upload source code to a public paste site; the web proxy blocked the upload.", blocked=True),
    A("misconfiguration", 1, "A storage bucket with internal build logs was made public by a recent change. No outside access has been seen yet."),
    A("misconfiguration", 0, "The TLS certificate for the public website expires in 12 days. Renewal is scheduled."),
    A("misconfiguration", 2, "The production database is reachable from the internet on port 5432 and still uses the default admin password, so anyone could take it over right now.", login=None),
    A("misconfiguration", 1, "A firewall rule allowing RDP from any address was added to {host}; the change has not been reviewed yet."),
    A("misconfiguration", None, "Audit logging was switched off on the staging cluster by an automation job."),
    A("misconfiguration", 0, "A test server only reachable from the internal network runs an outdated web framework with known low-risk issues."),
    A("brute_force", 0, "sshd: {n} failed password attempts for invalid users admin, oracle and test from {ip}. CrowdSec added the source to the firewall deny list; 0 successful sessions.", blocked=True),
    A("brute_force", 0, "Identity provider smart lockout stopped {n} password guesses against {user} from {ip2} and is now rejecting that address. No sign-in succeeded.", blocked=True),
    A("brute_force", 0, "WAF rate limit triggered after a botnet of 30 addresses sent {n} login attempts per minute to /wp-login.php. All further requests get HTTP 429 and no admin session was created.", blocked=True),
    A("brute_force", 1, "auth-service: a single source, {ip}, tried the same common password ('Summer2024!') against {n} staff accounts overnight, one attempt each. All attempts failed, but the address is still allowed through."),
    A("brute_force", 1, "RDP on {host}: 600 failed logons from {ip2} in 20 minutes, still ongoing. No successful logon yet and nothing is blocking the source."),
    A("brute_force", 2, "Analyst note: {user}'s account saw {n} failed password attempts overnight, followed by a successful sign-in from {ip} in another country at 04:12. The user was asleep and says it wasn't them. Session still open.", login=True),
    A("brute_force", 2, "SIEM correlation: {ip2} guessed its way into the FTP service account 'backup' after {n} tries and is now listing directories on {host}.", login=True),
    A("brute_force", 2, "Bots replaying a leaked username/password list against our mobile app API got into {n} customer accounts, and the gift-card balances on those accounts are being redeemed right now.", login=True),
    A("malware", 0, "EDR blocked execution of invoice_0921.exe on {host}: hash matches a known Emotet loader. The file was deleted and no child processes ran.", blocked=True),
    A("malware", 0, "Browser protection stopped a drive-by download of a fake 'Flash Player update' on {host}; the file never reached the disk.", blocked=True),
    A("malware", 0, "A USB stick plugged into {host} carried an autorun worm. Defender quarantined worm.vbs before it could run and the device was ejected.", blocked=True),
    A("malware", 1, "Sysmon on {host}: rundll32 loads an unsigned DLL from a user's AppData folder at every logon. No network activity seen so far; needs triage."),
    A("malware", 1, "User report from {user}: 'My laptop fan is going crazy and Task Manager shows a process called svch0st.exe using 90% CPU. I don't recognise it.' Nobody has examined {host} yet."),
    A("malware", 2, "Confirmed cryptominer on {host}: an xmrig process running as root is mining to an external pool and reinstalled itself through cron after being killed. No data was taken."),
    A("malware", 2, "An intruder logged in over RDP to {host} with a stolen admin password from {ip}, then dropped and ran a ransomware binary. EDR sees files being encrypted; the process is still active.", login=True),
    A("malware", 2, "EDR: Cobalt Strike beacon confirmed in memory on {host}, calling back to {ip} every 45 seconds. The process has not been stopped."),
    A("phishing", 0, "Mail gateway quarantined {n} copies of a DocuSign look-alike message with a credential-harvesting link; none reached user inboxes.", blocked=True),
    A("phishing", 0, "{user} clicked a fake SharePoint link in an email, but Safe Links blocked the page from loading. No password was entered anywhere.", blocked=True),
    A("phishing", 0, "Several staff got a text message claiming to be from IT and asking them to reply with their one-time codes. Everyone reported it to the help desk and nobody replied."),
    A("phishing", 1, "Someone posing as the help desk phoned {user} and asked for their laptop password. {user} hung up partway through but isn't sure whether they gave anything away."),
    A("phishing", 1, "An email about 'parking permit renewal' with a QR code leading to a fake payroll login page was delivered to {n} people. Click logs are not available yet."),
    A("phishing", 2, "{user} typed their credentials into a fake Microsoft 365 page from an email link. Ten minutes later someone signed in to the mailbox from {ip} and created a hidden forwarding rule.", login=True),
    A("phishing", 2, "A spear-phishing email impersonating a supplier tricked payroll into approving new bank details, and this month's 48,000 EUR payment has already gone to the fraudster's account."),
    A("phishing", 2, "After a caller impersonating {user} convinced the help desk to reset {user}'s password, the caller signed in to the VPN as {user} from {ip2} and is browsing internal wikis.", login=True),
    A("data_exfiltration", 0, "CASB stopped {user} from syncing a folder labelled 'Confidential - M&A' to a personal Dropbox. No files were uploaded.", blocked=True),
    A("data_exfiltration", 0, "Egress firewall blocked an outbound SFTP upload of hr_export.zip from {host} to {ip}. The connection was refused and no data left the network.", blocked=True),
    A("data_exfiltration", 1, "{host} sent 2 GB over HTTPS to a file-sharing site at 2am, which is unusual for this machine. Contents unknown; the owner hasn't responded yet."),
    A("data_exfiltration", 1, "A contractor downloaded {n} documents from the document management system in one afternoon, ten times their usual volume. Not confirmed as theft."),
    A("data_exfiltration", 1, "DLP in monitor-only mode flagged an email from {user} to a personal address with 'Q3 pricing.xlsx' attached; the email was delivered. Checking whether the file holds restricted data."),
    A("data_exfiltration", 2, "Using stolen credentials for {user}, an attacker signed in to the CRM from {ip2} and exported 150,000 customer records to an external server.", login=True),
    A("data_exfiltration", 2, "A ransomware gang posted samples of our contract files on its leak site. No files were encrypted and no malware was found; logs show 60 GB was copied from {host} to {ip} last week.", login=None),
    A("data_exfiltration", 2, "cloud-audit: an access key leaked in a public repo was used from {ip} to log in to our AWS account, and three S3 buckets of customer invoices are being copied to an outside account.", login=True),
    A("misconfiguration", 0, "Config scan: the HSTS header is missing on the internal wiki. Internal-only site, low risk."),
    A("misconfiguration", 0, "Policy-as-code check rejected a Terraform change that would have opened port 22 to 0.0.0.0/0 on {host}. The change was never applied.", blocked=True),
    A("misconfiguration", 0, "Cloud guardrail automatically reverted a change that made the 'invoices' bucket public within 30 seconds. Access logs show no outside reads.", blocked=True),
    A("misconfiguration", 1, "A bucket holding customer invoices turned out to be readable by any authenticated AWS user. Access logs are still being reviewed to see whether anyone outside read it."),
    A("misconfiguration", 1, "MFA was disabled on the 'svc-deploy' admin account during a migration and never turned back on. No unusual sign-ins so far; needs review."),
    A("misconfiguration", 1, "A permissions change last week gave the whole 'All Staff' group write access to the finance share on {host}. No misuse seen yet, but nobody has checked who changed it or why."),
    A("misconfiguration", 1, "Since yesterday's deploy, anyone on the office network can open the Kubernetes dashboard on {host} without a login. It is not exposed to the internet; no attacker activity found, under review."),
    A("misconfiguration", 2, "Since last night's deploy, the production payments API accepts requests with no authentication from anywhere on the internet. It is still live in this state and has not been rolled back."),
    A("brute_force", 0, "Okta ThreatInsight denied {n} sign-in requests from {ip}, an address on a known password-spray list, before any password was checked. Every request was rejected and no account was touched.", blocked=True),
    A("brute_force", 0, "Event 4625 x{n} for 'administrator' on {host} from {ip2}; source auto-blocked by the host firewall. 0 successful logons.", blocked=True),
    A("brute_force", 1, "Identity protection rejected a password spray from {ip}: {n} accounts, one guess each, all refused. The spray was stopped, but every username tried is real, including some never published anywhere, so someone has our staff list. Needs investigating.", blocked=True),
    A("brute_force", 1, "Suricata (detect-only): 'ET SCAN Potential SSH Brute Force' for {ip} -> {host}:22, 300 connections in 5 minutes. Nothing was dropped. Auth logs not pulled yet, so we don't know whether any attempt got in.", login=None),
    A("brute_force", 1, "{user}'s account gets exactly four failed sign-ins every hour from rotating residential IPs, staying just under the lockout limit. Day three and still going; no success so far and nothing blocks it."),
    A("brute_force", 2, "Entra ID sign-in log for {user}: {n} failures with error 50126 (invalid password) from {ip}, then a success over legacy IMAP, which skips MFA. That session is still open.", login=True),
    A("brute_force", 2, "Jenkins on {host}: a dictionary attack on the admin login succeeded after {n} guesses (the password was 'jenkins123'). The intruder has already created a second admin account.", login=True),
    A("brute_force", 2, "Accepted password for root on {host} from {ip} after {n} failed attempts. Nobody on the team owns that address; session still active.", login=True),
    A("malware", 1, "Jamf Protect blocked and quarantined an unsigned app matching the AMOS infostealer on {user}'s MacBook before it launched. It is the third time this week the same file has appeared in their Downloads, and nobody knows where it comes from.", blocked=True),
    A("malware", 0, "Web proxy antivirus flagged setup_crack.zip as Trojan.GenericKD and dropped the download; {host} only got a block page.", blocked=True),
    A("malware", 0, "ClamAV on the file server: Win.Ransomware.Locky found in an uploaded file and deleted on write, never opened.", blocked=True),
    A("malware", 1, "MDM blocked the install of a sideloaded APK, 'FreeVPN Pro', flagged as spyware, on {user}'s phone. It was the fourth attempt from that device this week and {user} says they never tried to install anything.", blocked=True),
    A("malware", 1, "IDS alert 'ET TROJAN Possible Qakbot C2 Activity': one connection from {host} to {ip}. Single hit only, and EDR on the host shows nothing unusual yet. Alert-only sensor, so the traffic was not dropped."),
    A("malware", 2, "An attacker logged in over SSH to {host} with a leaked deploy key, installed a kernel rootkit that hides its processes, and keeps a reverse shell open to {ip}.", login=True),
    A("malware", 2, "Using a stolen admin account, someone signed in to the vCenter web console from {ip2} and launched an ESXi encryptor. Six VMs are encrypted so far and more are going.", login=True),
    A("malware", 2, "A worm exploiting an unpatched SMB flaw has infected 14 workstations in the last hour. It needs no passwords or logins to spread, and the count is rising."),
    A("phishing", 0, "Inbound email from paypa1-security.com (domain registered 2 days ago, DMARC fail) linking to a fake card-verification form was rejected at SMTP. Not delivered to anyone.", blocked=True),
    A("phishing", 0, "An external Teams chat named 'IT Helpdesk (External)' sent {n} staff a link to 'reset your MFA'. Defender flagged the URL and blocked it at click time for everyone who tried; no passwords were entered.", blocked=True),
    A("phishing", 0, "FYI: a fake recruiter on LinkedIn messaged {user} asking for their work login 'to verify employment'. {user} ignored it and reported it. No company systems involved."),
    A("phishing", 1, "A customer forwarded an email that appears to come from our sales rep {user}, with a new 'payment link'. Our mail logs show no such outgoing message, so it looks spoofed from outside. Checking how many customers got it."),
    A("phishing", 1, "Callback scam: {n} employees got an email about a $399 'Geek Squad renewal' with a phone number to call to cancel. Two people called; we don't know yet what they were told."),
    A("phishing", 2, "Adversary-in-the-middle phishing: {user} signed in through a proxy page from an email link, the kit captured the session cookie, and the attacker used it to sign in as {user} and is now reading SharePoint from {ip}.", login=True),
    A("phishing", 2, "Smishing: a 'parcel held at customs' text led {user} to enter VPN credentials and a one-time code on a fake page. Three minutes later a VPN session for {user} started from {ip2}.", login=True),
    A("phishing", 1, "Mail gateway quarantined a bank-detail change request sent to the CFO from a look-alike of our supplier's domain. Nobody saw it, but it quoted a real open purchase order, so the sender knows something about us. Needs a look.", blocked=True),
    A("data_exfiltration", 0, "Email DLP held and rejected an outbound message from {user} to a webmail address carrying passport_scans.zip (312 passport images). Nothing reached the recipient.", blocked=True),
    A("data_exfiltration", 0, "Intune app protection stopped {user} from pasting a client contract out of Outlook into a personal notes app on their phone. The paste was blocked.", blocked=True),
    A("data_exfiltration", 0, "Endpoint DLP on {host} blocked an AirDrop transfer of roadmap_2025.key to an unknown nearby iPhone.", blocked=True),
    A("data_exfiltration", 1, "GCP audit log: a service account that normally reads one table ran {n} BigQuery exports last night into a bucket in a project we don't recognise. The jobs came from our own pipeline servers; checking with the data team whether that project is ours."),
    A("data_exfiltration", 1, "Print server: {user} printed 900 pages of customer account listings the day after handing in their resignation. Unusual for their role; not yet discussed with HR."),
    A("data_exfiltration", 2, "Okta: sign-in as {user} from {ip} with a password that appears in a dark-web dump; the session then downloaded the entire Legal shared drive to an unmanaged device. {user} was on a flight at the time.", login=True),
    A("data_exfiltration", 2, "GitHub audit log: {user}'s personal access token was used from {ip2} to authenticate as {user} and clone all 212 private repositories in the org within 40 minutes. {user} is on leave and did not do this.", login=True),
    A("data_exfiltration", 2, "A former contractor whose account was never disabled signed in from home last weekend and downloaded the full supplier price list and contract archive to a personal laptop.", login=True),
    A("misconfiguration", 0, "Kyverno admission policy rejected a production deployment that ran a container as privileged with hostNetwork: true. Nothing was scheduled.", blocked=True),
    A("misconfiguration", 0, "Intune marked {user}'s new laptop non-compliant because BitLocker was off and blocked it from company email and files until encryption finished.", blocked=True),
    A("misconfiguration", 0, "Azure Policy denied a deployment in the finance subscription that would have created a VM with a public IP and RDP open to the internet. The deployment failed; nothing was created.", blocked=True),
    A("misconfiguration", 1, "{host} accepts SSH password logins for root from the internet. Auth logs show no brute-force attempts and no logins from unknown addresses; the setting needs fixing and someone should check who enabled it."),
    A("misconfiguration", 1, "Azure activity log: a storage account SAS token with full read/write rights, expiring in 2099, was pasted into a wiki page every employee can see. No use from outside addresses so far."),
    A("misconfiguration", 2, "An Elasticsearch cluster holding {n} thousand patient records is open to the internet with no authentication at all; anyone can read the index right now, and it is still open."),
    A("misconfiguration", 2, "During last night's outage someone turned on the identity provider's debug flag that accepts any password, and it is still enabled in production: every account can be signed into with any password.", login=None),
    A("misconfiguration", None, "A developer turned off the endpoint firewall on their own laptop to debug a VPN problem and it has stayed off for a week."),
    A("brute_force", 0, "ADFS extranet smart lockout: {n} bad passwords for {user} from {ip2}, so ADFS now rejects that address while {user} can still sign in from familiar locations. No token was issued to the attacker.", blocked=True),
    A("brute_force", 0, "OWA /owa/auth.owa: {n} POSTs with wrong passwords for various mailboxes from {ip}. Front Door geo-filter now drops the source automatically. Successful logons: 0.", blocked=True),
    A("brute_force", 0, "Ticket {ticket}: the SIEM flagged {n} failed logins on the staging login page from {ip}. This is the approved penetration test (password-guessing phase) against dummy test accounts only, scheduled for today. No real accounts involved; closing as expected activity."),
    A("brute_force", 1, "SIEM rule 'Kerberos Pre-Auth Failure Spike' fired: event 4771 (failure code 0x18, bad password) for {n} different accounts from {host} within 15 minutes. No account is locked, none succeeded, and we don't yet know what on {host} is generating them."),
    A("brute_force", 1, "%ASA-6-113015: AAA user authentication Rejected: reason = Invalid password, user = vpnadmin, from {ip2}, repeated {n} times since 02:00 and still arriving. The source is not blocked; no successful authentication logged so far."),
    A("brute_force", 1, "mail-01 postfix: {n} failed SMTP AUTH LOGIN attempts from {ip}, cycling through usernames copied from our public staff directory with a few common passwords each. Still ongoing, nothing blocks it, and no AUTH has succeeded yet."),
    A("brute_force", 2, "After {n} Kerberos pre-authentication failures across many accounts, {ip2} authenticated as the service account 'svc-sql' (its password was 'Password1') and got a valid TGT. It has been requesting service tickets for every file server since.", login=True),
    A("brute_force", 2, "OWA password spray from {ip}: {n} mailboxes tried with 'Welcome2024!'. It worked for {user}, and the attacker has been signed in to {user}'s webmail for the last 20 minutes.", login=True),
    A("brute_force", 2, "WordPress xmlrpc.php: {n} password guesses batched through system.multicall; one batch hit the right password for editor {user}, and {ip} is now logged in to wp-admin as {user}.", login=True),
    A("malware", 0, "Chrome Enterprise policy blocked {user} from installing the extension 'PDF Converter Plus' on {host}. Its ID is on our blocklist as a known cookie-stealing extension; nothing was installed.", blocked=True),
    A("malware", 0, "CI supply-chain check failed the build on build-agent-7: the latest release of a transitive npm dependency adds a postinstall script that downloads and runs a binary from {ip}. The install was blocked before any script ran.", blocked=True),
    A("malware", 0, "WAF rule 'Webshell upload - China Chopper signature' blocked a POST of shell.php to the avatar upload form on web-03 from {ip}. The file never reached the disk.", blocked=True),
    A("malware", 1, "EDR heuristic on {host}: an unsigned process registered a low-level keyboard hook (WH_KEYBOARD_LL) and writes to a hidden file under ProgramData. Could be a keylogger or a legitimate accessibility tool; not analysed yet."),
    A("malware", 1, "NetFlow: {host} makes small connections every few minutes to {n} different addresses on port 6667 (IRC), a pattern typical of botnet agents. No process has been tied to it yet and the server has no EDR."),
    A("malware", 1, "User report from {user}: 'Since I installed the Tab Saver browser extension I get strange pop-ups on some sites.' The extension requests permission to read and change all data on every website. Nobody has looked at it yet."),
    A("malware", 2, "Webshell confirmed on web-03: uploads/cmd.aspx is taking POST requests from {ip}, and in the last hour it was used to run whoami, net user and a tool that dumps local password hashes. The file is still in place."),
    A("malware", 2, "Incident update: the npm package added to the frontend repo on Monday ran a postinstall backdoor on build-agent-7. The backdoor is still running and gives {ip} a remote shell on the agent, which is being actively used."),
    A("malware", 2, "Confirmed keylogger on the shared reception PC {host}: kbdsvc.exe has been recording every keystroke since {day} and uploading the log every hour. The PC is still in use and has not been cleaned."),
    A("phishing", 0, "Entra ID stopped a consent request: after clicking a link in an email, {user} tried to approve an unverified app called 'Office365 Secure Viewer' that asked for Mail.Read and offline_access. Tenant policy forbids user consent to such apps, so no token was issued.", blocked=True),
    A("phishing", 0, "Ticket {ticket}: accounts payable received invoice {invoice}, supposedly from {company}, with a 'pay online' link to a look-alike domain. {company} confirmed they never sent it; nothing was paid and the email was removed from every mailbox."),
    A("phishing", 0, "A caller claiming to be from our bank's fraud team asked the treasury desk to read out a payment authorisation code. {first} refused, rang the bank back on its official number, and the bank confirmed the call was a scam. Nothing was disclosed."),
    A("phishing", 1, "In a Slack Connect channel shared with a partner, an account calling itself '{name} - Payroll' asked {n} members to 'confirm direct deposit details' on an outside form that asks for company SSO credentials. Sign-in logs look normal so far, but not every recipient has replied yet."),
    A("phishing", 1, "Smishing wave: {n} employees got the text 'Your salary payment is on hold, confirm at hr-payroll-portal.co', which leads to a fake login page. Sign-in logs show no unusual logins yet; we are still asking who opened it."),
    A("phishing", 1, "{n} staff received an unsolicited calendar invite from an outside address; the description links to a 'shared agenda' behind a fake Microsoft login page. The invites were added to calendars automatically and we don't know yet whether anyone clicked."),
    A("phishing", 2, "OAuth consent phishing: from a link in an email, {user} granted an app called 'DocuView' Mail.ReadWrite and Mail.Send. The app is now sending the same lure from {user}'s mailbox to all of their contacts.", login=None),
    A("phishing", 2, "An external Teams user posing as the help desk got {user} to share their screen and type their password 'to fix Outlook'. The attacker then signed in as {user} from {ip2} and is browsing their OneDrive right now.", login=True),
    A("phishing", 2, "An 'invoice.html' attachment opened a fake Adobe sign-in page; {user} and two colleagues entered their passwords. All three accounts have since been signed into from {ip}, and those sessions are still active.", login=True),
    A("data_exfiltration", 0, "Proxy: a 1.8 GB upload from {host} to wetransfer.com was denied by the 'file sharing' category rule. {user} has asked for an exception to send marketing videos to an agency.", blocked=True),
    A("data_exfiltration", 0, "Removable-media control on {host} refused to copy the 'payroll_2024' folder to an unencrypted USB drive (read-only policy). Nothing was written to the drive.", blocked=True),
    A("data_exfiltration", 0, "Google Workspace DLP automatically blocked {user} from sharing a Drive folder of employee salary data with an outside Gmail address. The share never took effect and the external account had no access.", blocked=True),
    A("data_exfiltration", 1, "{user} sent 37 emails with attachments to what looks like their personal Hotmail address in ten minutes. The attachments haven't been reviewed yet and {user} hasn't been asked about it."),
    A("data_exfiltration", 1, "API logs: support agent {user}'s token called GET /api/v2/customers/<id> for {n} sequential customer IDs in one hour, far more than any ticket needs. Where the data went is unknown; it might be a badly written report script."),
    A("data_exfiltration", 1, "A 6 GB dump named prod_users.sql, created under {user}'s account from db-prod-1, appeared on a jump host last night, and the jump host then opened an SFTP session to an outside address we don't recognise. Whether the dump was sent is not known yet and {user} hasn't explained it."),
    A("data_exfiltration", 2, "{user}, who resigned yesterday, is using rclone on {host} to copy the entire R&D share (120 GB) to a personal Google Drive. Nobody authorised it and the transfer is still running."),
    A("data_exfiltration", 2, "HR investigation confirmed that over two weeks {user} emailed 230 attachments, including the full customer pricing model and product source code, to their personal Yahoo address before joining a competitor."),
    A("data_exfiltration", 2, "Someone logged in to db-prod-1 over SSH with the DBA service account from {ip2} (none of the DBAs did this) and used scp to copy a full dump of the orders database to an external VPS. The copy finished an hour ago.", login=True),
    A("misconfiguration", 0, "The TLS certificate of the internal Grafana on {host} expired yesterday, so browsers show a warning. The site is only reachable from the office network and the renewal is already in progress."),
    A("misconfiguration", 0, "AWS Config auto-remediation deleted a security-group rule opening MongoDB port 27017 to 0.0.0.0/0 two minutes after it was added. VPC flow logs show no inbound connections in that window.", blocked=True),
    A("misconfiguration", 0, "Scanner finding: directory listing is enabled on /static/ on {host}. The folder only holds public CSS files and images. Informational."),
    A("misconfiguration", 1, "IAM review: the Lambda role 'thumbnail-resizer' has AdministratorAccess (Action '*' on Resource '*') when it only needs to read and write one bucket. CloudTrail shows no misuse so far; it needs tightening and someone should find out why it was granted."),
    A("misconfiguration", 1, "The new network switch in the server room still uses the factory admin/admin login on its management interface, which is reachable from the whole office LAN. No logins besides the installer's have been seen."),
    A("misconfiguration", 1, "Pentest finding: the customer API reflects any Origin header with Access-Control-Allow-Credentials: true, so any website could read a logged-in customer's data through their browser. No sign of abuse in the logs; fix not yet scheduled."),
    A("misconfiguration", 2, "A firewall template pushed to all stores an hour ago turned off TLS on the card terminals' link to the payment processor, so card numbers are crossing the internet unencrypted right now. No attacker involved; the change is still live."),
    A("misconfiguration", 2, "Since Tuesday's release, a debug log level left on in the login service writes every user's plaintext password into application logs that all 300 engineers can search. It is still happening."),
    A("misconfiguration", 2, "Since a cache config change two hours ago, the customer portal serves some users other customers' account pages, including names, addresses and order history. No attacker is involved, but the bad config is still live and support has 30 complaints so far."),
]  # fmt: skip

SOURCES = ["EDR", "SIEM", "IDS", "mail-gateway", "DLP", "cloud-audit", "auth-service"]
ANALYST_LINES = ["on it", "who's on call tonight?", "pulling the logs now", "ack"]


def make(rng, core):
    """A security state: alert JSON, log record, plain alert text, or analyst chat."""
    text = fill(rng, core["text"])
    stamp = fill(rng, "2024-{mm}-{dd}T{hh}:{mi}:00Z", {
        "mm": f"{rng.randint(1, 12):02d}", "dd": f"{rng.randint(1, 28):02d}",
        "hh": f"{rng.randint(0, 23):02d}", "mi": f"{rng.randint(0, 59):02d}"})  # fmt: skip
    form = rng.random()
    if form < 0.4:
        state = {"alert_id": fill(rng, "SEC-{order}"), "source": rng.choice(SOURCES), "time": stamp,
                 "summary": text}  # fmt: skip
        if rng.random() < 0.4:
            state["status"] = "new"
    elif form < 0.6:
        state = {"timestamp": stamp, "service": rng.choice(SOURCES), "message": text}
    elif form < 0.85:
        state = rng.choice(["[ALERT] ", "Security alert: ", "", f"{stamp} "]) + text
    else:
        state = [
            f"soc-bot: new alert - {text}",
            f"{fill(rng, '{first}')}: {rng.choice(ANALYST_LINES)}",
        ]
    return state, dict(core)


FAMILIES = [
    {
        "type": "choice",
        "key": "cat",
        "qids": ["category", "attack_type", "alert_type", "threat", "class"],
        "instructions": [
            "What type of security event is this?",
            "Classify the alert.",
            "Which threat category fits this alert best?",
            "Categorise the security incident.",
            "What kind of attack or issue does the alert describe?",
        ],
        "options": {
            "brute_force": ["many password guesses against logins", "password guessing, spraying or credential stuffing"],
            "malware": ["malicious software on a machine", "viruses, trojans, ransomware, suspicious executables"],
            "phishing": ["deceptive emails or calls that trick people", "fraudulent messages impersonating someone"],
            "data_exfiltration": ["data leaving the organisation", "theft or unauthorised transfer of data"],
            "misconfiguration": ["an insecure setting or exposed system", "unsafe configuration, no attacker activity"],
        },
    },
    {
        "type": "score",
        "key": "sev",
        "qids": ["severity", "sev", "risk", "impact"],
        "instructions": [
            "How severe is this alert?",
            "Rate the severity of the security event.",
            "What severity should the SOC assign?",
            "How serious is the incident?",
        ],
        "styles": [
            ("low: blocked or no impact", "medium: suspicious, needs investigation", "high: confirmed compromise or damage in progress"),
            ("low", "medium", "high"),
            ("informational - handled or minor", "warning - possible threat, unconfirmed", "critical - active attack or breach"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["blocked"],
        "qids": ["blocked", "prevented", "auto_contained"],
        "instructions": [
            "The activity was stopped automatically by a security control.",
            "Was the threat blocked before it could do harm?",
            "A security tool prevented the action.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["login"],
        "qids": ["login_success", "attacker_in", "account_compromised"],
        "instructions": [
            "An unauthorised party successfully signed in to an account.",
            "Did an attacker manage to log in?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: None if x["sev"] is None else x["sev"] == 2,
        "qids": ["page_oncall", "escalate", "act_now"],
        "instructions": [
            "This alert needs immediate incident response.",
            "Should the on-call responder be paged right now?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "phishing",
        "qids": ["phishing", "is_phish"],
        "instructions": ["The alert is about a phishing attempt.", "Is this a phishing incident?"],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "malware",
        "qids": ["malware", "is_malware"],
        "instructions": ["The alert involves malicious software.", "Is malware involved?"],
    },
]  # fmt: skip

DOMAIN = {
    "name": "security_alerts",
    "prefix": "security",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
}
